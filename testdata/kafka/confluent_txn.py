"""confluent-kafka (librdkafka's Python binding) transactions scenario run
by cmd/topicgate/kafka_txn_clients_test.go against the Kafka door at
TOPICGATE_KAFKA: a transactional producer aborts a transaction; then a
read-process-write job reads TOPICGATE_TOPIC (TOPICGATE_INPUTS records) as
group TOPICGATE_GROUP, answers each on TOPICGATE_OUT and sends its
offsets to the transaction (send_offsets_to_transaction) before each
commit; then a second producer with the same transactional.id fences the
first, whose next commit fails, and commits its own. Prints one line per
step; the Go test asserts on them and on what SQL then reads. Every wait
has a deadline."""
import os
import sys
import time

from confluent_kafka import Consumer, KafkaException, Producer

BROKER = os.environ["TOPICGATE_KAFKA"]
IN = os.environ["TOPICGATE_TOPIC"]
OUT = os.environ["TOPICGATE_OUT"]
GROUP = os.environ["TOPICGATE_GROUP"]
INPUTS = int(os.environ["TOPICGATE_INPUTS"])
TXN_ID = GROUP + "-txn"


def producer():
    p = Producer({
        "bootstrap.servers": BROKER,
        "transactional.id": TXN_ID,
        "transaction.timeout.ms": 30000,
        "message.timeout.ms": 20000,
        "socket.timeout.ms": 10000,
    })
    p.init_transactions(30)
    return p


def main():
    p = producer()
    p.begin_transaction()
    offsets = []
    p.produce(OUT, value=b"aborted", partition=0, on_delivery=lambda err, m: offsets.append(m.offset()))
    p.flush(20)
    p.abort_transaction(30)
    print("aborted, delivered at offset %s" % offsets)
    sys.stdout.flush()

    c = Consumer({
        "bootstrap.servers": BROKER,
        "group.id": GROUP,
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
        "isolation.level": "read_committed",
        "session.timeout.ms": 10000,
        "fetch.wait.max.ms": 300,
    })
    c.subscribe([IN])
    done, txns = 0, 0
    end = time.monotonic() + 60
    while done < INPUTS:
        if time.monotonic() > end:
            raise SystemExit("timeout: answered %d of %d" % (done, INPUTS))
        msgs = c.consume(num_messages=7, timeout=0.5)
        if not msgs:
            continue
        p.begin_transaction()
        for m in msgs:
            if m.error():
                raise KafkaException(m.error())
            p.produce(OUT, key=m.value(), value=b"out-" + m.value(), partition=m.partition())
        p.send_offsets_to_transaction(c.position(c.assignment()), c.consumer_group_metadata(), 30)
        p.commit_transaction(30)
        done += len(msgs)
        txns += 1
    c.close()
    print("rpw %d in %s transactions" % (done, "several" if txns > 1 else "one"))
    sys.stdout.flush()

    p.begin_transaction()
    p.produce(OUT, value=b"zombie", partition=0)
    p.flush(20)
    fresh = producer()
    try:
        p.commit_transaction(30)
        print("zombie committed")
    except KafkaException as e:
        err = e.args[0]
        print("zombie refused %s fatal=%s" % (err.name(), err.fatal()))
    fresh.begin_transaction()
    fresh.produce(OUT, value=b"fresh", partition=0)
    fresh.commit_transaction(30)
    print("fresh committed")
    print("done")


if __name__ == "__main__":
    main()
