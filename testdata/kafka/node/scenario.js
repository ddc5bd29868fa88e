// kafkajs scenario run by cmd/topicgate/kafka_clients_test.go against the
// Kafka door at TOPICGATE_KAFKA (host:port), on topic TOPICGATE_TOPIC:
// produce three records with keys and headers, read them back from the
// beginning byte for byte, then a consumer group reads and commits, and a
// second run of the group reads nothing new. Prints one line per step;
// the Go test asserts on them. Every wait has a deadline.
'use strict'
const fs = require('fs')
const path = require('path')
const { Kafka, logLevel } = require('kafkajs')

const BROKER = process.env.TOPICGATE_KAFKA
const TOPIC = process.env.TOPICGATE_TOPIC
const GROUP = process.env.TOPICGATE_GROUP

const records = [
  { key: Buffer.from('acct-17'), value: Buffer.from('deposit 100'), headers: { source: Buffer.from('web') } },
  { key: Buffer.from('acct-18'), value: Buffer.from('withdraw 5'), headers: { source: Buffer.from('batch'), trace: Buffer.from([0, 1, 0xfe, 0xff]) } },
  { key: Buffer.from([0xff, 0x00, 0x7f]), value: Buffer.from([0x00, 0xc3, 0x28, 0xff]), headers: { empty: Buffer.alloc(0) } }
]

function hex (b) { return b === null || b === undefined ? 'null' : Buffer.from(b).toString('hex') }
function show (m) {
  const hs = Object.keys(m.headers).sort().map(k => `${k}=${hex(m.headers[k])}`).join(',')
  return `${hex(m.key)} ${hex(m.value)} ${hs}`
}

function withDeadline (ms, what, p) {
  let timer
  const t = new Promise((resolve, reject) => { timer = setTimeout(() => reject(new Error(`timeout: ${what}`)), ms) })
  return Promise.race([p, t]).finally(() => clearTimeout(timer))
}

// consume runs a consumer of group until want messages arrived (or, with
// want 0, until its first fetch after joining returned nothing), commits
// what it read and returns the messages.
async function consume (kafka, groupId, want) {
  const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 300, sessionTimeout: 10000, heartbeatInterval: 1000, retry: { retries: 2 } })
  const got = []
  try {
    await consumer.connect()
    await consumer.subscribe({ topics: [TOPIC], fromBeginning: true })
    await withDeadline(30000, `group ${groupId} reading ${want}`, new Promise((resolve, reject) => {
      if (want === 0) {
        consumer.on(consumer.events.FETCH, () => resolve())
      }
      consumer.on(consumer.events.CRASH, e => reject(e.payload.error))
      consumer.run({
        autoCommit: false,
        eachMessage: async ({ topic, partition, message }) => {
          got.push(message)
          await consumer.commitOffsets([{ topic, partition, offset: (BigInt(message.offset) + 1n).toString() }])
          if (got.length >= want) resolve()
        }
      }).catch(reject)
    }))
  } finally {
    await withDeadline(15000, 'disconnect', consumer.disconnect()).catch(() => {})
  }
  return got
}

async function main () {
  const version = JSON.parse(fs.readFileSync(path.join(__dirname, 'node_modules', 'kafkajs', 'package.json'))).version
  console.log(`version kafkajs ${version}`)
  const kafka = new Kafka({ clientId: 'topicgate-scenario', brokers: [BROKER], logLevel: logLevel.ERROR, connectionTimeout: 5000, requestTimeout: 15000, retry: { retries: 3 } })

  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false })
  await withDeadline(15000, 'producer connect', producer.connect())
  const res = await withDeadline(15000, 'send', producer.send({ topic: TOPIC, acks: -1, messages: records }))
  console.log(`produced ${res.map(r => `${r.partition}:${r.baseOffset}`).join(' ')}`)
  await producer.disconnect()

  const read = await consume(kafka, GROUP + '-reader', records.length)
  for (const [i, m] of read.entries()) {
    const want = records[i]
    const same = m.key.equals(want.key) && m.value.equals(want.value) &&
      Object.keys(m.headers).length === Object.keys(want.headers).length &&
      Object.keys(want.headers).every(k => Buffer.isBuffer(m.headers[k]) && m.headers[k].equals(want.headers[k]))
    console.log(`read ${m.offset} ${show(m)} ${same ? 'same' : 'DIFFERENT'}`)
  }

  const first = await consume(kafka, GROUP, records.length)
  console.log(`group first run ${first.length} ${first.map(m => m.offset).join(',')}`)
  const second = await consume(kafka, GROUP, 0)
  console.log(`group second run ${second.length}`)

  const admin = kafka.admin()
  await withDeadline(15000, 'admin connect', admin.connect())
  const offs = await withDeadline(15000, 'fetchOffsets', admin.fetchOffsets({ groupId: GROUP, topics: [TOPIC] }))
  console.log(`committed ${offs[0].partitions.map(p => `${p.partition}:${p.offset}`).join(' ')}`)
  await admin.disconnect()
  console.log('done')
}

main().catch(e => { console.error(e); process.exit(1) })
