"""confluent-kafka (librdkafka's Python binding, Debian's
python3-confluent-kafka) group member run by
cmd/topicgate/kafka_members_test.go against the Kafka door at
TOPICGATE_KAFKA: a member of group TOPICGATE_GROUP consuming topic
TOPICGATE_TOPIC from the earliest offset, with a short session timeout
and manual commits. It prints one line per event, which the Go test
reads as it goes:

    assigned 0,1      its whole assignment, after each rebalance
    read P O V        a record: partition, offset, value
    committed P O     a synchronous commit of offset O (the next to read)
    closed            it left the group and is exiting

It commits each record it reads after reading it, but only the first
TOPICGATE_COMMITS of them when that is set (the rest it reads without
committing). It stops, leaving the group, when its stdin closes; the Go
test kills it instead to have it vanish without leaving. Every wait has
a deadline."""
import os
import sys
import threading
import time

from confluent_kafka import Consumer, KafkaException

BROKER = os.environ["TOPICGATE_KAFKA"]
TOPIC = os.environ["TOPICGATE_TOPIC"]
GROUP = os.environ["TOPICGATE_GROUP"]
COMMITS = int(os.environ.get("TOPICGATE_COMMITS", "-1"))
DEADLINE = 120


def say(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def main():
    stop = threading.Event()

    def watch_stdin():
        sys.stdin.read()
        stop.set()

    threading.Thread(target=watch_stdin, daemon=True).start()
    c = Consumer({
        "bootstrap.servers": BROKER,
        "group.id": GROUP,
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
        "session.timeout.ms": 4000,
        "heartbeat.interval.ms": 300,
        "fetch.wait.max.ms": 100,
        "socket.timeout.ms": 10000,
    })
    c.subscribe([TOPIC], on_assign=lambda _c, parts: say(
        "assigned " + ",".join(str(p) for p in sorted(tp.partition for tp in parts))))
    committed = 0
    end = time.monotonic() + DEADLINE
    while not stop.is_set():
        if time.monotonic() > end:
            raise SystemExit("timeout: still running after %ds" % DEADLINE)
        m = c.poll(0.1)
        if m is None:
            continue
        if m.error():
            raise KafkaException(m.error())
        say("read %d %d %s" % (m.partition(), m.offset(), m.value().decode()))
        if COMMITS < 0 or committed < COMMITS:
            c.commit(message=m, asynchronous=False)
            committed += 1
            say("committed %d %d" % (m.partition(), m.offset() + 1))
    c.close()
    say("closed")


if __name__ == "__main__":
    main()
