// kafkajs group member run by cmd/topicgate/kafka_members_test.go against
// the Kafka door at TOPICGATE_KAFKA: a member of group TOPICGATE_GROUP
// consuming topic TOPICGATE_TOPIC from the beginning, with a short
// session timeout and manual commits. It prints one line per event, which
// the Go test reads as it goes:
//
//   assigned 0,1      its whole assignment, after each rebalance
//   read P O V        a record: partition, offset, value
//   committed P O     a commit of offset O (the next to read), answered
//   closed            it left the group and is exiting
//
// It commits each record it reads after reading it, but only the first
// TOPICGATE_COMMITS of them when that is set. It stops, leaving the
// group, when its stdin closes; the Go test kills it instead to have it
// vanish without leaving. Every wait has a deadline.
'use strict'
const { Kafka, logLevel } = require('kafkajs')

const BROKER = process.env.TOPICGATE_KAFKA
const TOPIC = process.env.TOPICGATE_TOPIC
const GROUP = process.env.TOPICGATE_GROUP
const COMMITS = parseInt(process.env.TOPICGATE_COMMITS || '-1', 10)

function say (line) { process.stdout.write(line + '\n') }

function withDeadline (ms, what, p) {
  let timer
  const t = new Promise((resolve, reject) => { timer = setTimeout(() => reject(new Error(`timeout: ${what}`)), ms) })
  return Promise.race([p, t]).finally(() => clearTimeout(timer))
}

async function main () {
  setTimeout(() => { console.error('timeout: still running after 120s'); process.exit(1) }, 120000).unref()
  const kafka = new Kafka({ clientId: 'topicgate-member', brokers: [BROKER], logLevel: logLevel.ERROR, connectionTimeout: 5000, requestTimeout: 15000, retry: { retries: 5 } })
  const consumer = kafka.consumer({ groupId: GROUP, sessionTimeout: 4000, heartbeatInterval: 300, rebalanceTimeout: 10000, maxWaitTimeInMs: 100, retry: { retries: 5 } })
  consumer.on(consumer.events.GROUP_JOIN, e => {
    const parts = (e.payload.memberAssignment[TOPIC] || []).slice().sort((a, b) => a - b)
    say(`assigned ${parts.join(',')}`)
  })
  consumer.on(consumer.events.CRASH, e => { console.error(e.payload.error); process.exit(1) })
  await withDeadline(15000, 'connect', consumer.connect())
  await withDeadline(15000, 'subscribe', consumer.subscribe({ topics: [TOPIC], fromBeginning: true }))
  let committed = 0
  process.stdin.on('end', () => {
    withDeadline(15000, 'disconnect', consumer.disconnect())
      .then(() => { say('closed'); process.exit(0) })
      .catch(e => { console.error(e); process.exit(1) })
  })
  process.stdin.resume()
  await consumer.run({
    autoCommit: false,
    eachMessage: async ({ topic, partition, message }) => {
      say(`read ${partition} ${message.offset} ${message.value.toString()}`)
      if (COMMITS < 0 || committed < COMMITS) {
        committed++
        const next = (BigInt(message.offset) + 1n).toString()
        await consumer.commitOffsets([{ topic, partition, offset: next }])
        say(`committed ${partition} ${next}`)
      }
    }
  })
}

main().catch(e => { console.error(e); process.exit(1) })
