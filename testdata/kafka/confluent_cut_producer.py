"""confluent-kafka (librdkafka's Python binding, Debian's
python3-confluent-kafka) idempotent producer run by
cmd/topicgate/kafka_cut_test.go through a proxy (TOPICGATE_KAFKA) that
cuts its connections: it produces the values 0..TOPICGATE_RECORDS-1 to
topic TOPICGATE_TOPIC, value i to partition i % TOPICGATE_PARTITIONS, in
order, and prints "delivered N" when every record was acknowledged (or
the errors it got, and exits 1). Small batches make many Produce
requests for the proxy to cut among. Every wait has a deadline."""
import os
import sys

from confluent_kafka import Producer

BROKER = os.environ["TOPICGATE_KAFKA"]
TOPIC = os.environ["TOPICGATE_TOPIC"]
RECORDS = int(os.environ["TOPICGATE_RECORDS"])
PARTITIONS = int(os.environ["TOPICGATE_PARTITIONS"])


def main():
    p = Producer({
        "bootstrap.servers": BROKER,
        "enable.idempotence": True,
        "linger.ms": 5,
        "batch.num.messages": 200,
        "message.timeout.ms": 60000,
        "socket.timeout.ms": 10000,
        # Each cut comes soon after a connect, which librdkafka takes for a
        # flapping broker: without a low ceiling its reconnect backoff
        # doubles to seconds.
        "reconnect.backoff.ms": 50,
        "reconnect.backoff.max.ms": 200,
        "retry.backoff.ms": 50,
    })
    delivered = [0]
    errors = []

    def on_delivery(err, _m):
        if err:
            errors.append(str(err))
        else:
            delivered[0] += 1

    # Fewer records than the producer's queue holds (100000).
    for i in range(RECORDS):
        p.produce(TOPIC, value=str(i).encode(), partition=i % PARTITIONS, on_delivery=on_delivery)
        p.poll(0)
    left = p.flush(60)
    if left or errors:
        sys.stderr.write("%d undelivered, errors: %s\n" % (left, errors[:10]))
        sys.exit(1)
    print("delivered %d" % delivered[0])


if __name__ == "__main__":
    main()
