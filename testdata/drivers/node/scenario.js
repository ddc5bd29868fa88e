// node-postgres scenario: client.query with untyped text parameters
// (extended protocol), named prepared statements, BEGIN/COMMIT/ROLLBACK
// through client.query, pg-cursor (row-limited Execute + Flush),
// pg-copy-streams for COPY.
'use strict'
const fs = require('fs')
const path = require('path')
const { pipeline } = require('stream/promises')
const { Readable, Writable } = require('stream')
const pg = require('pg')
const Cursor = require('pg-cursor')
const copyStreams = require('pg-copy-streams')

const driver = 'node-postgres'
const P = process.env.TOPICGATE_PREFIX || `drv_node_${process.pid}_${Date.now()}_`
const HOST = process.env.TOPICGATE_HOST || '127.0.0.1'
const PORT = Number(process.env.TOPICGATE_PORT || 5433)
const USER = process.env.TOPICGATE_USER || 'postgres'
const PASSWORD = process.env.TOPICGATE_PASSWORD || undefined // unset: the server trusts
const DATA64K = Buffer.alloc(64 * 1024)
for (let i = 0; i < DATA64K.length; i++) DATA64K[i] = i % 256

function pkgVersion (name) {
  return JSON.parse(fs.readFileSync(path.join(__dirname, 'node_modules', name, 'package.json'))).version
}

class Mismatch extends Error {}
function expect (cond, what) { if (!cond) throw new Mismatch(what) }
function expectEq (got, want, what) {
  const g = JSON.stringify(got); const w = JSON.stringify(want)
  if (g !== w) throw new Mismatch(`${what}: got ${g}, want ${w}`)
}

let client = null
const failed = []
let passed = 0

async function connect () {
  if (client) { try { await client.end() } catch (e) {} }
  client = new pg.Client({ host: HOST, port: PORT, user: USER, password: PASSWORD, database: 'postgres', connectionTimeoutMillis: 10000 })
  client.on('error', () => {})
  client.on('notice', () => {})
  await client.connect()
}

async function healthy () {
  try {
    await client.query('ROLLBACK')
    await client.query('SELECT 1')
  } catch (e) {
    await connect()
  }
}

async function select1 () {
  const res = await client.query('SELECT 1 AS one')
  expectEq(res.rows, [{ one: 1 }], 'SELECT 1 after the error')
}

async function check (name, fn) {
  if (client && name !== 'connect') { try { await healthy() } catch (e) {} }
  try {
    const detail = await fn()
    passed++
    console.log(`ok ${name}: ${detail || ''}`)
  } catch (e) {
    failed.push(name)
    const code = e.code ? ` [${e.code}]` : ''
    console.log(`FAIL ${name}: ${e instanceof Mismatch ? '' : e.constructor.name + code + ': '}${String(e.message).replace(/\n/g, ' | ')}`)
    if (process.env.TOPICGATE_TRACE) console.error(e)
  }
}

const INSERT = `INSERT INTO ${P}in (producer_id, seqno, data, attrs) VALUES ($1, $2, $3, $4)`

async function consume (n) {
  const res = await client.query(`SELECT offset, data FROM ${P}in WITH (CONSUMER = c) LIMIT $1`, [n])
  return res.rows.map(r => [String(r.offset), r.data.toString()])
}

function expectError (sql, values, code) {
  return async () => {
    try {
      await client.query(sql, values)
    } catch (e) {
      if (e instanceof Mismatch) throw e
      expectEq(e.code, code, `SQLSTATE of ${sql}`)
      await select1()
      return `${code}, then SELECT 1`
    }
    throw new Mismatch(`no error from ${sql}`)
  }
}

async function main () {
  console.log(`version ${driver} pg ${pkgVersion('pg')}, pg-copy-streams ${pkgVersion('pg-copy-streams')}, pg-cursor ${pkgVersion('pg-cursor')}, node ${process.version}`)

  await check('connect', async () => {
    await connect()
    const res = await client.query('SELECT 1 AS one')
    expectEq(res.rows, [{ one: 1 }], 'SELECT 1')
    return `server_version ${(await client.query("SHOW server_version")).rows[0].server_version}`
  })
  if (!client || failed.includes('connect')) return finish()

  await check('create_topics', async () => {
    for (const t of ['in (CONSUMER c)', 'out', 'bin', 'copy']) {
      const res = await client.query(`CREATE TOPIC ${P}${t}`)
      expectEq(res.command, 'CREATE', 'command')
    }
    return '4 topics'
  })

  await check('insert_params', async () => {
    for (let i = 1; i <= 5; i++) {
      const res = await client.query(INSERT, ['prod', i, Buffer.from(`m${i}`), '{"k":"v"}'])
      expectEq(res.rowCount, 1, `rowCount of INSERT seqno ${i}`)
    }
    const res = await client.query(INSERT, ['prod', 3, Buffer.from('dup'), '{"k":"v"}'])
    expectEq(res.rowCount, 0, 'rowCount of the duplicate (prod, 3)')
    return '5 inserts (untyped text, Buffer as binary) count 1, duplicate counts 0'
  })

  await check('insert_prepared', async () => {
    for (let i = 6; i <= 10; i++) {
      const res = await client.query({ name: 'ins', text: INSERT, values: ['prod', i, Buffer.from(`m${i}`), { k: 'v' }] })
      expectEq(res.rowCount, 1, `rowCount of prepared INSERT seqno ${i}`)
    }
    const res = await client.query({ name: 'ins', text: INSERT, values: ['prod', 6, Buffer.from('dup'), { k: 'v' }] })
    expectEq(res.rowCount, 0, 'rowCount of the prepared duplicate (prod, 6)')
    return 'named statement: 5 inserts, duplicate counts 0'
  })

  await check('bytea_roundtrip', async () => {
    const res = await client.query(`INSERT INTO ${P}bin (data) VALUES ($1)`, [DATA64K])
    expectEq(res.rowCount, 1, 'rowCount')
    const got = (await client.query(`SELECT data FROM ${P}bin`)).rows[0].data
    expect(Buffer.isBuffer(got) && got.equals(DATA64K), `64 KiB bytea differs (got ${got && got.length} bytes)`)
    return '65536 bytes'
  })

  await check('jsonb_attrs', async () => {
    const res = await client.query(`SELECT attrs, attrs->>'k' AS k FROM ${P}in WHERE seqno = $1`, [1])
    expectEq(res.rows, [{ attrs: { k: 'v' }, k: 'v' }], 'attrs')
    return 'attrs {"k":"v"}'
  })

  await check('timestamptz_param', async () => {
    const ts = new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 123))
    await client.query(`INSERT INTO ${P}bin (data, created_at, message_group_id) VALUES ($1, $2, $3)`, [Buffer.from('ts'), ts, 'g1'])
    const res = await client.query(`SELECT created_at, message_group_id AS g FROM ${P}bin WHERE data = $1 AND written_at >= $2`, [Buffer.from('ts'), ts])
    expectEq(res.rows.map(r => [r.created_at.toISOString(), r.g]), [[ts.toISOString(), 'g1']], 'created_at read back')
    return `created_at = ${ts.toISOString()} (a Date, sent as local-time text with offset); written_at >= $2`
  })

  await check('stateless_read', async () => {
    let res = await client.query(`SELECT seqno, convert_from(data, 'UTF8') AS body FROM ${P}in ORDER BY offset`)
    expectEq(res.rows.map(r => [r.seqno, r.body]), Array.from({ length: 10 }, (_, i) => [String(i + 1), `m${i + 1}`]), 'all messages')
    res = await client.query(`SELECT offset FROM ${P}in WHERE offset >= $1 ORDER BY offset LIMIT $2`, [7, 2])
    expectEq(res.rows.map(r => r.offset), ['7', '8'], 'offset >= 7 LIMIT 2')
    res = await client.query(`SELECT offset FROM ${P}in WHERE producer_id = $1 AND seqno = $2`, ['prod', 3])
    expectEq(res.rows.map(r => r.offset), ['2'], 'the original of the duplicate')
    return '10 rows in order; WHERE/LIMIT parameters'
  })

  await check('array_param', async () => {
    const res = await client.query(`SELECT count(*)::int AS n FROM ${P}in WHERE partition = ANY($1) AND offset = ANY($2)`, [[0, 5], [0, 1, 2]])
    expectEq(res.rows[0].n, 3, 'count')
    return 'JS arrays (sent as {0,5} text) with = ANY'
  })

  await check('cursor_read', async () => {
    const cursor = client.query(new Cursor(`SELECT seqno FROM ${P}in ORDER BY offset`))
    const a = await cursor.read(4)
    const b = await cursor.read(4)
    const c = await cursor.read(4)
    await cursor.close()
    expectEq([a, b, c].map(x => x.map(r => Number(r.seqno))), [[1, 2, 3, 4], [5, 6, 7, 8], [9, 10]], 'pages of 4')
    return 'pg-cursor pages 4+4+2 (Execute with a row limit, Flush)'
  })

  await check('consumer_read', async () => {
    expectEq(await consume(3), [['0', 'm1'], ['1', 'm2'], ['2', 'm3']], 'first consumer read')
    expectEq(await consume(3), [['3', 'm4'], ['4', 'm5'], ['5', 'm6']], 'second consumer read')
    return 'offsets 0-2 then 3-5'
  })

  await check('rpw_txn', async () => {
    await client.query('BEGIN')
    try {
      const got = await consume(2)
      expectEq(got, [['6', 'm7'], ['7', 'm8']], 'read in the transaction')
      for (const [o, d] of got) {
        const res = await client.query(`INSERT INTO ${P}out (producer_id, seqno, data) VALUES ($1, $2, $3)`, ['rpw', o, Buffer.from(d.toUpperCase())])
        expectEq(res.rowCount, 1, 'INSERT in the transaction')
      }
      await client.query('COMMIT')
    } catch (e) {
      await client.query('ROLLBACK')
      throw e
    }
    const res = await client.query(`SELECT seqno, convert_from(data, 'UTF8') AS d FROM ${P}out WHERE producer_id = 'rpw' ORDER BY offset`)
    expectEq(res.rows, [{ seqno: '6', d: 'M7' }, { seqno: '7', d: 'M8' }], 'committed output')
    return 'read 6-7, wrote 2, committed'
  })

  await check('rollback_rewind', async () => {
    await client.query('BEGIN')
    expectEq(await consume(2), [['8', 'm9'], ['9', 'm10']], 'read in the transaction')
    await client.query(`INSERT INTO ${P}out (data) VALUES ($1)`, ['never'])
    await client.query('ROLLBACK')
    expectEq(await consume(10), [['8', 'm9'], ['9', 'm10']], 'read again after ROLLBACK')
    const res = await client.query(`SELECT count(*)::int AS n FROM ${P}out WHERE data = 'never'`)
    expectEq(res.rows[0].n, 0, 'rolled-back message')
    return '8-9 read again, nothing written'
  })

  await check('copy_in', async () => {
    const stream = client.query(copyStreams.from(`COPY ${P}copy (producer_id, seqno, data) FROM STDIN`))
    await pipeline(Readable.from(['cp\t1\tc1\n', 'cp\t2\tc2\n', 'cp\t2\tdup\n']), stream)
    const res = await client.query(`SELECT seqno, convert_from(data, 'UTF8') AS d FROM ${P}copy ORDER BY offset`)
    expectEq(res.rows, [{ seqno: '1', d: 'c1' }, { seqno: '2', d: 'c2' }], 'copied rows (the duplicate skipped)')
    return `pg-copy-streams from: rowCount ${stream.rowCount}`
  })

  await check('copy_out', async () => {
    const stream = client.query(copyStreams.to(`COPY (SELECT seqno, convert_from(data, 'UTF8') FROM ${P}copy ORDER BY offset) TO STDOUT`))
    const chunks = []
    await pipeline(stream, new Writable({ write (c, _, cb) { chunks.push(c); cb() } }))
    expectEq(Buffer.concat(chunks).toString(), '1\tc1\n2\tc2\n', 'COPY TO STDOUT')
    return '2 rows out'
  })

  await check('error_42601_simple', expectError('SELEC 1', undefined, '42601'))
  await check('error_42601_extended', expectError('SELEC $1', [1], '42601'))
  await check('error_42P01_simple', expectError(`SELECT * FROM ${P}missing`, undefined, '42P01'))
  await check('error_42P01_extended', expectError(`SELECT * FROM ${P}missing WHERE offset = $1`, [1], '42P01'))
  await check('error_22012_simple', expectError('SELECT 1/0', undefined, '22012'))
  await check('error_22012_extended', expectError('SELECT 1/$1', [0], '22012'))
  await check('error_bad_param', expectError(`SELECT offset FROM ${P}in WHERE seqno = $1`, ['abc'], '22P02'))
  await check('error_copy', async () => {
    try {
      const stream = client.query(copyStreams.from(`COPY ${P}copy (producer_id, seqno, data) FROM STDIN`))
      await pipeline(Readable.from(['cp\tabc\tbad\n']), stream)
    } catch (e) {
      expectEq(e.code, '22P02', 'SQLSTATE of the COPY')
      await select1()
      return '22P02 from a COPY row, then SELECT 1'
    }
    throw new Mismatch("no error from a COPY row with seqno 'abc'")
  })
  await check('error_25P02', async () => {
    await client.query('BEGIN')
    try {
      await client.query('SELECT 1/$1', [0])
      throw new Mismatch('no error')
    } catch (e) {
      if (e instanceof Mismatch) throw e
      expectEq(e.code, '22012', 'first error')
    }
    try {
      await client.query('SELECT 1')
      throw new Mismatch('no 25P02')
    } catch (e) {
      if (e instanceof Mismatch) throw e
      expectEq(e.code, '25P02', 'statement in the failed transaction')
    }
    await client.query('ROLLBACK')
    await select1()
    return '22012, 25P02, ROLLBACK, SELECT 1'
  })
  await roles()
  finish()
}

// The roles_* checks (README.md): a role with INSERT and not SELECT on a
// topic, logged in through pg.Client with its password.
const ROLE = `${P}writer`
const GRANTED = `${P}granted`
const ROLE_PASSWORD = 'writer-pw'
const WRONG_PASSWORD = 'wrong-pw'

function roleClient (password) {
  const c = new pg.Client({ host: HOST, port: PORT, user: ROLE, password, database: 'postgres', connectionTimeoutMillis: 10000 })
  c.on('error', () => {})
  return c
}

async function roles () {
  let rc = null
  const roleConn = () => {
    if (!rc) throw new Mismatch(`no connection as ${ROLE} (roles_login failed)`)
    return rc
  }
  await check('roles_grant', async () => {
    await client.query(`CREATE ROLE ${ROLE} LOGIN PASSWORD '${ROLE_PASSWORD}'`)
    await client.query(`CREATE TOPIC ${GRANTED}`)
    await client.query(`GRANT INSERT ON TOPIC ${GRANTED} TO ${ROLE}`)
    return `CREATE ROLE ${ROLE} LOGIN PASSWORD, CREATE TOPIC, GRANT INSERT ON TOPIC`
  })
  await check('roles_login', async () => {
    const c = roleClient(ROLE_PASSWORD)
    await c.connect()
    rc = c
    const res = await rc.query('SELECT current_user AS u')
    expectEq(res.rows, [{ u: ROLE }], 'current_user')
    return `pg.Client as the role (SCRAM-SHA-256), current_user ${ROLE}`
  })
  await check('roles_insert', async () => {
    const res = await roleConn().query(`INSERT INTO ${GRANTED} (data) VALUES ($1)`, [Buffer.from('by-role')])
    expectEq([res.command, res.rowCount], ['INSERT', 1], 'command, rowCount')
    const back = await client.query(`SELECT convert_from(data, 'UTF8') AS d FROM ${GRANTED}`)
    expectEq(back.rows, [{ d: 'by-role' }], 'the message, read as the bootstrap user')
    return 'INSERT with a Buffer parameter counts 1; read back as the bootstrap user'
  })
  await check('roles_denied', async () => {
    const c = roleConn()
    try {
      await c.query(`SELECT data FROM ${GRANTED} WHERE offset >= $1`, [0])
    } catch (e) {
      if (e instanceof Mismatch) throw e
      expectEq([e.code, e.message], ['42501', `permission denied for topic ${GRANTED}`], 'err.code, err.message')
      const res = await c.query('SELECT 1 AS one')
      expectEq(res.rows, [{ one: 1 }], 'SELECT 1 after the error')
      return `42501 permission denied for topic ${GRANTED} (err.code), SELECT 1`
    }
    throw new Mismatch('the SELECT as the role succeeded')
  })
  await check('roles_bad_password', async () => {
    const c = roleClient(WRONG_PASSWORD)
    try {
      await c.connect()
    } catch (e) {
      expectEq(e.code, '28P01', `err.code (${e.message})`)
      return '28P01 (err.code)'
    }
    await c.end()
    throw new Mismatch('a wrong password logged in')
  })
  if (rc) { try { await rc.end() } catch (e) {} }
}

function finish () {
  console.log(`summary ${driver}: ${passed} checks ok, ${failed.length} failed${failed.length ? ' (' + failed.join(', ') + ')' : ''}`)
  const done = () => process.exit(failed.length ? 1 : 0)
  if (client) client.end().then(done, done); else done()
}

main().catch(e => { console.log(`FAIL scenario: ${e.stack}`); failed.push('scenario'); finish() })
