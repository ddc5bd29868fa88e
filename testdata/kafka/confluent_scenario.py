"""confluent-kafka (librdkafka's Python binding, Debian's
python3-confluent-kafka) scenario run by cmd/topicgate/kafka_clients_test.go
against the Kafka door at TOPICGATE_KAFKA, on topic TOPICGATE_TOPIC: an
idempotent zstd producer sends three records with keys and headers, a
consumer reads them back from the beginning byte for byte, then a consumer
group reads and commits, and a second run of the group reads nothing new.
Prints one line per step; the Go test asserts on them. Every wait has a
deadline."""
import os
import sys
import time

import confluent_kafka
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition

BROKER = os.environ["TOPICGATE_KAFKA"]
TOPIC = os.environ["TOPICGATE_TOPIC"]
GROUP = os.environ["TOPICGATE_GROUP"]

RECORDS = [
    (b"acct-17", b"deposit 100", [("source", b"web")]),
    (b"acct-18", b"withdraw 5", [("source", b"batch"), ("trace", b"\x00\x01\xfe\xff")]),
    (b"\xff\x00\x7f", b"\x00\xc3\x28\xff", [("empty", b"")]),
]


def hexof(b):
    return "null" if b is None else b.hex()


def show(key, value, headers):
    hs = ",".join("%s=%s" % (k, hexof(v)) for k, v in sorted(headers or []))
    return "%s %s %s" % (hexof(key), hexof(value), hs)


def consumer(group):
    return Consumer({
        "bootstrap.servers": BROKER,
        "group.id": group,
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
        "session.timeout.ms": 10000,
        "fetch.wait.max.ms": 300,
        "socket.timeout.ms": 10000,
    })


def poll_until(c, want, deadline, quiet_after_assign=None):
    """Polls c until want messages arrived; with quiet_after_assign, until
    that many seconds passed since the group assigned partitions."""
    got = []
    assigned = []
    c.subscribe([TOPIC], on_assign=lambda _c, parts: assigned.append(time.monotonic()))
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        if want and len(got) >= want:
            return got
        if quiet_after_assign is not None and assigned and time.monotonic() - assigned[0] > quiet_after_assign:
            return got
        m = c.poll(0.2)
        if m is None:
            continue
        if m.error():
            raise KafkaException(m.error())
        got.append(m)
    raise SystemExit("timeout: group read %d of %d" % (len(got), want))


def main():
    print("version confluent-kafka %s librdkafka %s" % (confluent_kafka.version()[0], confluent_kafka.libversion()[0]))
    sys.stdout.flush()

    p = Producer({
        "bootstrap.servers": BROKER,
        "enable.idempotence": True,
        "compression.type": "zstd",
        "linger.ms": 50,
        "message.timeout.ms": 20000,
    })
    delivered = []
    for key, value, headers in RECORDS:
        p.produce(TOPIC, value=value, key=key, headers=headers, partition=0,
                  on_delivery=lambda err, m: delivered.append(("%s" % err) if err else "%d:%d" % (m.partition(), m.offset())))
    left = p.flush(30)
    if left or len(delivered) != len(RECORDS):
        raise SystemExit("timeout: %d undelivered, delivered %s" % (left, delivered))
    print("produced " + " ".join(delivered))

    # From the beginning, no group: assign partition 0 at OFFSET_BEGINNING.
    r = consumer(GROUP + "-reader")
    r.assign([TopicPartition(TOPIC, 0, confluent_kafka.OFFSET_BEGINNING)])
    read = []
    end = time.monotonic() + 30
    while len(read) < len(RECORDS) and time.monotonic() < end:
        m = r.poll(0.2)
        if m is None:
            continue
        if m.error():
            raise KafkaException(m.error())
        read.append(m)
    r.close()
    if len(read) < len(RECORDS):
        raise SystemExit("timeout: read %d of %d" % (len(read), len(RECORDS)))
    for m, (key, value, headers) in zip(read, RECORDS):
        same = m.key() == key and m.value() == value and (m.headers() or []) == headers
        print("read %d %s %s" % (m.offset(), show(m.key(), m.value(), m.headers()), "same" if same else "DIFFERENT"))

    c = consumer(GROUP)
    first = poll_until(c, len(RECORDS), 30)
    c.commit(asynchronous=False)
    c.close()
    print("group first run %d %s" % (len(first), ",".join(str(m.offset()) for m in first)))

    c = consumer(GROUP)
    second = poll_until(c, 0, 30, quiet_after_assign=2.0)
    committed = c.committed([TopicPartition(TOPIC, 0)], timeout=10)
    c.close()
    print("group second run %d" % len(second))
    print("committed " + " ".join("%d:%d" % (tp.partition, tp.offset) for tp in committed))
    print("done")


if __name__ == "__main__":
    main()
