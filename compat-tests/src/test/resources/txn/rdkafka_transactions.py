"""librdkafka's transactional producer (confluent-kafka-python) against one broker, for LibrdkafkaTransactionsIT.

Usage: rdkafka_transactions.py <bootstrap> <topic> <transactional.id>
Commits 10 records, aborts 5, commits 3 more, then reads the topic with read_committed and read_uncommitted
consumers and prints one JSON object: {"committed": [...], "uncommitted": [...]} (values in offset order).
"""
import json
import sys

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition


def produce(producer, topic, values):
    for value in values:
        producer.produce(topic, value=value.encode(), partition=0)
    producer.flush(30)


def read_all(bootstrap, topic, isolation):
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "rdkafka-txn-" + isolation,
                         "enable.auto.commit": False, "isolation.level": isolation,
                         "enable.partition.eof": True})
    consumer.assign([TopicPartition(topic, 0, 0)])
    values = []
    for _ in range(600):
        msg = consumer.poll(0.1)
        if msg is None:
            continue
        if msg.error():
            if msg.error().code() == -191:  # _PARTITION_EOF
                break
            raise KafkaException(msg.error())
        values.append(msg.value().decode())
    consumer.close()
    return values


def main():
    bootstrap, topic, transactional_id = sys.argv[1:4]
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": transactional_id,
                         "transaction.timeout.ms": 60000})
    producer.init_transactions(60)
    producer.begin_transaction()
    produce(producer, topic, ["committed-%d" % i for i in range(10)])
    producer.commit_transaction(60)
    producer.begin_transaction()
    produce(producer, topic, ["aborted-%d" % i for i in range(5)])
    producer.abort_transaction(60)
    producer.begin_transaction()
    produce(producer, topic, ["committed-%d" % i for i in range(10, 13)])
    producer.commit_transaction(60)
    print(json.dumps({"committed": read_all(bootstrap, topic, "read_committed"),
                      "uncommitted": read_all(bootstrap, topic, "read_uncommitted")}))


if __name__ == "__main__":
    main()
