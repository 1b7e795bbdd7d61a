'use strict';
// Two librdkafka consumers of the KIP-848 protocol (group.protocol=consumer) in one group, through Confluent's
// Node.js client (@confluentinc/kafka-javascript, librdkafka built from the source its npm package bundles), driven
// by LibrdkafkaConsumerProtocolIT over standard input and output, one JSON object a line each way.
//
// Usage: node rdkafka_kip848.js BOOTSTRAP TOPIC GROUP MEMBER...
// Each member reads 10 records a call at most, commits what it read after each call (commitSync), and commits what
// is still uncommitted of a partition before it gives the partition up (the rebalance callback's revocation), so
// that the next owner starts where it stopped. Commands, one a line: "start MEMBER" (the member connects and
// subscribes), "status" (prints each member's assignment, the
// count of records it read and the commits that failed), "close MEMBER" (the member leaves the group; prints
// "closed" once it has), "exit" (closes the members still open and prints every value each member read, in order).
const Kafka = require('@confluentinc/kafka-javascript');
const readline = require('readline');

const [bootstrap, topic, group, ...names] = process.argv.slice(2);
const ASSIGN = Kafka.CODES.ERRORS.ERR__ASSIGN_PARTITIONS;
const REVOKE = Kafka.CODES.ERRORS.ERR__REVOKE_PARTITIONS;
const TIMED_OUT = Kafka.CODES.ERRORS.ERR__TIMED_OUT;

function print(object) {
  process.stdout.write(JSON.stringify(object) + '\n');
}

class Member {
  constructor(name) {
    this.name = name;
    this.assignment = new Set();
    this.read = [];
    this.uncommitted = new Map(); // partition -> the offset after the last record read
    this.errors = [];
    this.rebalanceProtocols = new Set();
    this.state = 'idle';
    this.consumer = new Kafka.KafkaConsumer({
      'bootstrap.servers': bootstrap,
      'group.id': group,
      'group.protocol': 'consumer',
      'client.id': name,
      'enable.auto.commit': false,
      'rebalance_cb': (err, assignment) => this.rebalance(err, assignment),
      ...(process.env.RDKAFKA_DEBUG ? { 'debug': process.env.RDKAFKA_DEBUG, 'event_cb': true } : {}),
    }, {
      // In the topic configuration: the client sets a topic configuration object as librdkafka's
      // default_topic_conf, which replaces the topic properties of the global one, so an auto.offset.reset given
      // there (with an empty object here) is lost and librdkafka resets to its default, latest. A member then
      // started at the end of a partition, missing what was produced before its ListOffsets (issue 22).
      'auto.offset.reset': 'earliest',
    });
    this.consumer.on('event.log', (log) => process.stderr.write(`${name} ${log.severity} ${log.fac} ${log.message}\n`));
    this.consumer.setDefaultConsumeTimeout(100);
    this.consumer.on('event.error', (err) => this.errors.push('error event: ' + err.message));
  }

  start() {
    this.state = 'connecting';
    this.consumer.connect({}, (err) => {
      if (err) {
        this.errors.push('connect: ' + err.message);
        this.state = 'failed';
        return;
      }
      this.consumer.subscribe([topic]);
      this.state = 'consuming';
      this.poll();
    });
  }

  poll() {
    if (this.state !== 'consuming') {
      this.polling = false;
      if (this.onPollStopped) {
        this.onPollStopped();
      }
      return;
    }
    this.polling = true;
    this.consumer.consume(10, (err, messages) => {
      if (err) {
        if (err.code !== TIMED_OUT) {
          this.errors.push('consume: ' + err.message);
        }
      } else if (messages.length > 0) {
        for (const message of messages) {
          this.read.push(message.value.toString());
          this.uncommitted.set(message.partition, message.offset + 1);
        }
        this.commit([...this.uncommitted.keys()], false);
      }
      setImmediate(() => this.poll());
    });
  }

  /** Commits what was read of `partitions`; a failed commit stays uncommitted unless `required`, then an error. */
  commit(partitions, required) {
    const offsets = partitions.filter((p) => this.uncommitted.has(p))
      .map((p) => ({ topic, partition: p, offset: this.uncommitted.get(p) }));
    if (offsets.length === 0) {
      return;
    }
    try {
      this.consumer.commitSync(offsets);
      for (const offset of offsets) {
        if (this.uncommitted.get(offset.partition) === offset.offset) {
          this.uncommitted.delete(offset.partition);
        }
      }
    } catch (e) {
      // As the Java consumer's: a commit that meets a bumped member epoch fails; the next one carries it.
      if (required) {
        this.errors.push('commit before revocation: ' + e.message);
      }
    }
  }

  rebalance(err, assignment) {
    const partitions = assignment.map((tp) => tp.partition);
    const protocol = this.consumer.rebalanceProtocol();
    this.rebalanceProtocols.add(protocol);
    try {
      if (err.code === ASSIGN) {
        this.incremental(protocol) ? this.consumer.incrementalAssign(assignment) : this.consumer.assign(assignment);
        partitions.forEach((p) => this.assignment.add(p));
      } else if (err.code === REVOKE) {
        this.commit(partitions, true);
        partitions.forEach((p) => this.uncommitted.delete(p));
        this.incremental(protocol) ? this.consumer.incrementalUnassign(assignment) : this.consumer.unassign();
        partitions.forEach((p) => this.assignment.delete(p));
      } else {
        this.errors.push('rebalance: ' + err.message);
      }
    } catch (e) {
      this.errors.push('rebalance ' + err.code + ': ' + e.message);
    }
  }

  /** COOPERATIVE for the consumer protocol; NONE in the revocation of a closing consumer (librdkafka 2.15). */
  incremental(protocol) {
    return protocol !== 'EAGER';
  }

  close(done) {
    const disconnect = () => this.consumer.disconnect((err) => {
      if (err) {
        this.errors.push('disconnect: ' + err.message);
      }
      this.state = 'closed';
      done();
    });
    if (this.state !== 'consuming') {
      this.state = 'closing';
      disconnect();
      return;
    }
    this.state = 'closing';
    if (this.polling) {
      this.onPollStopped = disconnect;
    } else {
      disconnect();
    }
  }

  status() {
    return {
      state: this.state,
      assignment: [...this.assignment].sort((a, b) => a - b),
      read: this.read.length,
      rebalanceProtocols: [...this.rebalanceProtocols].sort(),
      errors: this.errors,
    };
  }
}

const members = new Map(names.map((name) => [name, new Member(name)]));

function status() {
  const result = {};
  members.forEach((member, name) => {
    result[name] = member.status();
  });
  return result;
}

const commands = readline.createInterface({ input: process.stdin });
commands.on('line', (line) => {
  const [command, argument] = line.trim().split(/\s+/);
  if (command === 'start') {
    members.get(argument).start();
  } else if (command === 'status') {
    print({ event: 'status', librdkafka: Kafka.librdkafkaVersion, members: status() });
  } else if (command === 'close') {
    members.get(argument).close(() => print({ event: 'closed', member: argument }));
  } else if (command === 'exit') {
    const open = [...members.values()].filter((member) => member.state !== 'closed' && member.state !== 'idle');
    let left = open.length;
    const finish = () => {
      const read = {};
      members.forEach((member, name) => {
        read[name] = member.read;
      });
      print({ event: 'done', read, members: status() });
      process.exit(0);
    };
    if (left === 0) {
      finish();
    }
    open.forEach((member) => member.close(() => {
      left -= 1;
      if (left === 0) {
        finish();
      }
    }));
  } else if (command) {
    print({ event: 'unknown', line });
  }
});
commands.on('close', () => process.exit(1));
