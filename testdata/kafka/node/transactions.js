// kafkajs transactions scenario run by
// cmd/topicgate/kafka_txn_clients_test.go against the Kafka door at
// TOPICGATE_KAFKA: a transactional producer aborts a transaction; then a
// read-process-write job reads TOPICGATE_TOPIC (TOPICGATE_INPUTS records)
// as group TOPICGATE_GROUP, answers each on TOPICGATE_OUT and sends its
// offsets to the transaction (sendOffsets) before each commit; then a
// second producer with the same transactionalId fences the first, whose
// next commit fails, and commits its own. Prints one line per step; the
// Go test asserts on them and on what SQL then reads. Every wait has a
// deadline.
'use strict'
const { Kafka, logLevel } = require('kafkajs')

const BROKER = process.env.TOPICGATE_KAFKA
const IN = process.env.TOPICGATE_TOPIC
const OUT = process.env.TOPICGATE_OUT
const GROUP = process.env.TOPICGATE_GROUP
const INPUTS = Number(process.env.TOPICGATE_INPUTS)
const TXN_ID = GROUP + '-txn'

function withDeadline (ms, what, p) {
  let timer
  const t = new Promise((resolve, reject) => { timer = setTimeout(() => reject(new Error(`timeout: ${what}`)), ms) })
  return Promise.race([p, t]).finally(() => clearTimeout(timer))
}

async function producer (kafka) {
  const p = kafka.producer({ transactionalId: TXN_ID, idempotent: true, maxInFlightRequests: 1, transactionTimeout: 30000 })
  await withDeadline(15000, 'producer connect', p.connect())
  return p
}

// rpw answers every input in transactions of one fetched batch each and
// returns how many transactions it took.
async function rpw (kafka, p) {
  const consumer = kafka.consumer({ groupId: GROUP, maxWaitTimeInMs: 300, sessionTimeout: 10000, heartbeatInterval: 1000, maxBytesPerPartition: 64, readUncommitted: false })
  let done = 0
  let txns = 0
  try {
    await consumer.connect()
    await consumer.subscribe({ topics: [IN], fromBeginning: true })
    await withDeadline(60000, `answering ${INPUTS} inputs`, new Promise((resolve, reject) => {
      consumer.on(consumer.events.CRASH, e => reject(e.payload.error))
      consumer.run({
        autoCommit: false,
        eachBatchAutoResolve: false,
        eachBatch: async ({ batch, resolveOffset }) => {
          if (batch.messages.length === 0) return
          const txn = await p.transaction()
          try {
            await txn.send({ topic: OUT, messages: batch.messages.map(m => ({ key: m.value, value: Buffer.concat([Buffer.from('out-'), m.value]), partition: batch.partition })) })
            const next = (BigInt(batch.lastOffset()) + 1n).toString()
            await txn.sendOffsets({ consumerGroupId: GROUP, topics: [{ topic: batch.topic, partitions: [{ partition: batch.partition, offset: next }] }] })
            await txn.commit()
          } catch (e) {
            await txn.abort().catch(() => {})
            throw e
          }
          for (const m of batch.messages) resolveOffset(m.offset)
          done += batch.messages.length
          txns++
          if (done >= INPUTS) resolve()
        }
      }).catch(reject)
    }))
  } finally {
    await withDeadline(15000, 'disconnect', consumer.disconnect()).catch(() => {})
  }
  return { done, txns }
}

async function main () {
  const kafka = new Kafka({ clientId: 'topicgate-txn', brokers: [BROKER], logLevel: logLevel.NOTHING, connectionTimeout: 5000, requestTimeout: 15000, retry: { retries: 3 } })
  const p = await producer(kafka)
  let txn = await p.transaction()
  const sent = await txn.send({ topic: OUT, messages: [{ value: 'aborted', partition: 0 }] })
  await txn.abort()
  console.log(`aborted, delivered at offset ${sent.map(r => r.baseOffset).join(',')}`)

  const { done, txns } = await rpw(kafka, p)
  console.log(`rpw ${done} in ${txns > 1 ? 'several' : 'one'} transactions`)

  txn = await p.transaction()
  await txn.send({ topic: OUT, messages: [{ value: 'zombie', partition: 0 }] })
  const fresh = await producer(kafka)
  const ftxn = await fresh.transaction() // kafkajs initializes the producer id here
  try {
    await txn.commit()
    console.log('zombie committed')
  } catch (e) {
    console.log(`zombie refused ${e.type || e.name}`)
  }
  await ftxn.send({ topic: OUT, messages: [{ value: 'fresh', partition: 0 }] })
  await ftxn.commit()
  console.log('fresh committed')
  await p.disconnect().catch(() => {})
  await fresh.disconnect()
  console.log('done')
}

main().catch(e => { console.error(e); process.exit(1) })
