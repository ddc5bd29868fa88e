# ruby-pg scenario: exec (simple protocol), exec_params and
# prepare/exec_prepared (extended), conn.transaction, copy_data.
require 'pg'
require 'json'

DRIVER = 'ruby-pg'
P = ENV['TOPICGATE_PREFIX'] || "drv_ruby_#{Process.pid}_#{Time.now.to_i}_"
HOST = ENV['TOPICGATE_HOST'] || '127.0.0.1'
PORT = (ENV['TOPICGATE_PORT'] || '5433').to_i
USER = ENV['TOPICGATE_USER'] || 'postgres'
PASSWORD = ENV['TOPICGATE_PASSWORD'] # nil: the server trusts
DATA64K = (0...64 * 1024).map { |i| i % 256 }.pack('C*')

class Mismatch < StandardError; end

def expect(cond, what)
  raise Mismatch, what unless cond
end

def expect_eq(got, want, what)
  raise Mismatch, "#{what}: got #{got.inspect}, want #{want.inspect}" unless got == want
end

$conn = nil
$failed = []
$passed = 0

def connect
  begin
    $conn&.close
  rescue StandardError
    nil
  end
  $conn = PG.connect(host: HOST, port: PORT, user: USER, password: PASSWORD, dbname: 'postgres', connect_timeout: 10)
  $conn.set_notice_processor { |_| }
end

def healthy
  return connect if $conn.nil? || $conn.finished? || $conn.status != PG::CONNECTION_OK
  $conn.exec('ROLLBACK') if $conn.transaction_status != PG::PQTRANS_IDLE
  $conn.exec('SELECT 1')
rescue StandardError
  connect
end

def select1
  expect_eq($conn.exec('SELECT 1 AS one').values, [['1']], 'SELECT 1 after the error')
end

def check(name)
  begin
    healthy unless name == 'connect'
  rescue StandardError
    nil
  end
  detail = yield
  $passed += 1
  puts "ok #{name}: #{detail}"
rescue Mismatch => e
  $failed << name
  puts "FAIL #{name}: #{e.message}"
rescue StandardError => e
  $failed << name
  code = e.respond_to?(:result) && e.result ? " [#{e.result.error_field(PG::PG_DIAG_SQLSTATE)}]" : ''
  puts "FAIL #{name}: #{e.class}#{code}: #{e.message.strip.gsub("\n", ' | ')}"
  warn e.backtrace.join("\n") if ENV['TOPICGATE_TRACE']
ensure
  $stdout.flush
end

def sqlstate(e)
  e.result&.error_field(PG::PG_DIAG_SQLSTATE)
end

def expect_error(sql, params, code)
  begin
    params.nil? ? $conn.exec(sql) : $conn.exec_params(sql, params)
  rescue PG::Error => e
    expect_eq(sqlstate(e), code, "SQLSTATE of #{sql}")
    select1
    return "#{code}, then SELECT 1"
  end
  raise Mismatch, "no error from #{sql}"
end

def bytea(res, row, col)
  PG::Connection.unescape_bytea(res.getvalue(row, col))
end

def consume(n)
  res = $conn.exec_params("SELECT offset, data FROM #{P}in WITH (CONSUMER = c) LIMIT $1", [n])
  (0...res.ntuples).map { |i| [res.getvalue(i, 0).to_i, bytea(res, i, 1)] }
end

INSERT = "INSERT INTO #{P}in (producer_id, seqno, data, attrs) VALUES ($1, $2, $3, $4)"

puts "version #{DRIVER} #{PG::VERSION} (libpq #{PG.library_version}, ruby #{RUBY_VERSION})"

check('connect') do
  connect
  expect_eq($conn.exec('SELECT 1').values, [['1']], 'SELECT 1')
  "server_version #{$conn.parameter_status('server_version')}"
end
if $failed.include?('connect')
  puts "summary #{DRIVER}: 0 checks ok, 1 failed (connect)"
  exit 1
end

check('create_topics') do
  ['in (CONSUMER c)', 'out', 'bin', 'copy'].each do |t|
    expect_eq($conn.exec("CREATE TOPIC #{P}#{t}").cmd_status, 'CREATE TOPIC', 'tag')
  end
  '4 topics'
end

check('insert_params') do
  (1..5).each do |i|
    res = $conn.exec_params(INSERT, ['prod', i, { value: "m#{i}", format: 1 }, '{"k":"v"}'])
    expect_eq(res.cmd_tuples, 1, "cmd_tuples of INSERT seqno #{i}")
  end
  res = $conn.exec_params(INSERT, ['prod', 3, { value: 'dup', format: 1 }, '{"k":"v"}'])
  expect_eq(res.cmd_tuples, 0, 'cmd_tuples of the duplicate (prod, 3)')
  expect_eq(res.cmd_status, 'INSERT 0 0', 'tag of the duplicate')
  '5 exec_params inserts (text, binary bytea) count 1, duplicate counts 0'
end

check('insert_prepared') do
  $conn.prepare('ins', INSERT)
  (6..10).each do |i|
    res = $conn.exec_prepared('ins', ['prod', i, "\\x#{"m#{i}".unpack1('H*')}", '{"k":"v"}'])
    expect_eq(res.cmd_tuples, 1, "cmd_tuples of prepared INSERT seqno #{i}")
  end
  res = $conn.exec_prepared('ins', ['prod', 6, '\x647570', '{"k":"v"}'])
  expect_eq(res.cmd_tuples, 0, 'cmd_tuples of the prepared duplicate (prod, 6)')
  desc = $conn.describe_prepared('ins')
  types = (0...desc.nparams).map { |i| desc.paramtype(i) }
  expect_eq(types, [25, 20, 17, 3802], 'parameter types of the prepared statement')
  "5 prepared inserts (bytea as hex text), duplicate counts 0, parameter oids #{types}"
end

check('bytea_roundtrip') do
  res = $conn.exec_params("INSERT INTO #{P}bin (data) VALUES ($1)", [{ value: DATA64K, format: 1 }])
  expect_eq(res.cmd_tuples, 1, 'cmd_tuples')
  got = bytea($conn.exec("SELECT data FROM #{P}bin"), 0, 0)
  expect(got == DATA64K, "64 KiB bytea differs (text result, got #{got.bytesize} bytes)")
  got = $conn.exec_params("SELECT data FROM #{P}bin", [], 1).getvalue(0, 0)
  expect(got.b == DATA64K, "64 KiB bytea differs (binary result, got #{got.bytesize} bytes)")
  '65536 bytes, text and binary results'
end

check('jsonb_attrs') do
  res = $conn.exec_params("SELECT attrs, attrs->>'k' FROM #{P}in WHERE seqno = $1", [1])
  expect_eq(JSON.parse(res.getvalue(0, 0)), { 'k' => 'v' }, 'attrs')
  expect_eq(res.getvalue(0, 1), 'v', "attrs->>'k'")
  "attrs #{res.getvalue(0, 0)}"
end

check('timestamptz_param') do
  ts = Time.utc(2026, 1, 2, 3, 4, 5.123456r)
  $conn.exec_params("INSERT INTO #{P}bin (data, created_at, message_group_id) VALUES ($1, $2, $3)",
                    ['ts', PG::TextEncoder::TimestampWithTimeZone.new.encode(ts), 'g1'])
  res = $conn.exec_params("SELECT created_at, message_group_id FROM #{P}bin WHERE data = $1 AND written_at >= $2",
                          ['ts', '2026-01-02 03:04:05.123456+00'])
  got = res.values.map { |t, g| [PG::TextDecoder::TimestampWithTimeZone.new.decode(t).utc, g] }
  expect_eq(got, [[ts, 'g1']], 'created_at read back')
  "created_at = #{ts.strftime('%F %T.%6N %z')} through PG::TextEncoder/Decoder::TimestampWithTimeZone; written_at >= $2"
end

check('basic_type_map') do
  # ruby-pg's typed results: PG::BasicTypeMapForResults reads pg_type.
  res = $conn.exec_params("SELECT seqno, created_at, attrs FROM #{P}bin WHERE data = $1", ['ts'])
  res.type_map = PG::BasicTypeMapForResults.new($conn)
  row = res.values.first
  expect_eq(row[0], nil, 'seqno')
  expect(row[1].is_a?(Time), "created_at decoded as #{row[1].class}")
  "BasicTypeMapForResults: #{row.map(&:class).join(', ')}"
end

check('stateless_read') do
  res = $conn.exec("SELECT seqno, convert_from(data, 'UTF8') FROM #{P}in ORDER BY offset")
  expect_eq(res.values, (1..10).map { |i| [i.to_s, "m#{i}"] }, 'all messages')
  res = $conn.exec_params("SELECT offset FROM #{P}in WHERE offset >= $1 ORDER BY offset LIMIT $2", [7, 2])
  expect_eq(res.column_values(0), %w[7 8], 'offset >= 7 LIMIT 2')
  res = $conn.exec_params("SELECT offset FROM #{P}in WHERE producer_id = $1 AND seqno = $2", ['prod', 3])
  expect_eq(res.column_values(0), ['2'], 'the original of the duplicate')
  '10 rows in order; WHERE/LIMIT parameters'
end

check('array_param') do
  enc = PG::TextEncoder::Array.new(elements_type: PG::TextEncoder::Integer.new)
  res = $conn.exec_params("SELECT count(*) FROM #{P}in WHERE partition = ANY($1) AND offset = ANY($2)", [enc.encode([0, 5]), enc.encode([0, 1, 2])])
  expect_eq(res.getvalue(0, 0), '3', 'count')
  'PG::TextEncoder::Array parameters with = ANY'
end

check('consumer_read') do
  expect_eq(consume(3), [[0, 'm1'], [1, 'm2'], [2, 'm3']], 'first consumer read')
  expect_eq(consume(3), [[3, 'm4'], [4, 'm5'], [5, 'm6']], 'second consumer read')
  'offsets 0-2 then 3-5'
end

check('rpw_txn') do
  $conn.transaction do |c|
    got = consume(2)
    expect_eq(got, [[6, 'm7'], [7, 'm8']], 'read in the transaction')
    got.each do |o, d|
      res = c.exec_params("INSERT INTO #{P}out (producer_id, seqno, data) VALUES ($1, $2, $3)", ['rpw', o, d.upcase])
      expect_eq(res.cmd_tuples, 1, 'INSERT in the transaction')
    end
  end
  res = $conn.exec("SELECT seqno, convert_from(data, 'UTF8') FROM #{P}out ORDER BY offset")
  expect_eq(res.values, [%w[6 M7], %w[7 M8]], 'committed output')
  'read 6-7, wrote 2, committed'
end

class Rollback < StandardError; end

check('rollback_rewind') do
  begin
    $conn.transaction do |c| # rolls back on an exception and re-raises it
      expect_eq(consume(2), [[8, 'm9'], [9, 'm10']], 'read in the transaction')
      c.exec_params("INSERT INTO #{P}out (data) VALUES ($1)", ['never'])
      raise Rollback
    end
  rescue Rollback
    nil
  end
  expect_eq(consume(10), [[8, 'm9'], [9, 'm10']], 'read again after ROLLBACK')
  expect_eq($conn.exec("SELECT count(*) FROM #{P}out").getvalue(0, 0), '2', 'messages in out after ROLLBACK')
  '8-9 read again, nothing written'
end

check('copy_in') do
  res = $conn.copy_data("COPY #{P}copy (producer_id, seqno, data) FROM STDIN") do
    $conn.put_copy_data("cp\t1\tc1\n")
    $conn.put_copy_data("cp\t2\tc2\ncp\t2\tdup\n")
  end
  res2 = $conn.exec("SELECT seqno, convert_from(data, 'UTF8') FROM #{P}copy ORDER BY offset")
  expect_eq(res2.values, [%w[1 c1], %w[2 c2]], 'copied rows (the duplicate skipped)')
  "copy_data in: #{res.cmd_status}"
end

check('copy_in_encoder') do
  enc = PG::TextEncoder::CopyRow.new(type_map: PG::TypeMapByColumn.new([nil, nil, PG::TextEncoder::Bytea.new]))
  $conn.copy_data("COPY #{P}copy (producer_id, seqno, data) FROM STDIN", enc) do
    $conn.put_copy_data(['cp', 3, DATA64K])
  end
  got = bytea($conn.exec("SELECT data FROM #{P}copy WHERE seqno = 3"), 0, 0)
  expect(got == DATA64K, 'COPY of 64 KiB through TextEncoder::CopyRow differs')
  '64 KiB row through PG::TextEncoder::CopyRow'
end

check('copy_out') do
  rows = []
  $conn.copy_data("COPY (SELECT seqno, convert_from(data, 'UTF8') FROM #{P}copy WHERE seqno < 3 ORDER BY offset) TO STDOUT") do
    while (line = $conn.get_copy_data)
      rows << line
    end
  end
  expect_eq(rows, ["1\tc1\n", "2\tc2\n"], 'COPY TO STDOUT')
  '2 rows out'
end

check('error_42601_simple') { expect_error('SELEC 1', nil, '42601') }
check('error_42601_extended') { expect_error('SELEC $1', [1], '42601') }
check('error_42P01_simple') { expect_error("SELECT * FROM #{P}missing", nil, '42P01') }
check('error_42P01_extended') { expect_error("SELECT * FROM #{P}missing WHERE offset = $1", [1], '42P01') }
check('error_22012_simple') { expect_error('SELECT 1/0', nil, '22012') }
check('error_22012_extended') { expect_error('SELECT 1/$1', [0], '22012') }
check('error_bad_param') { expect_error("SELECT offset FROM #{P}in WHERE seqno = $1", ['abc'], '22P02') }
check('error_copy') do
  begin
    $conn.copy_data("COPY #{P}copy (producer_id, seqno, data) FROM STDIN") do
      $conn.put_copy_data("cp\tabc\tbad\n")
    end
    raise Mismatch, "no error from a COPY row with seqno 'abc'"
  rescue PG::Error => e
    expect_eq(sqlstate(e), '22P02', 'SQLSTATE of the COPY')
  end
  select1
  '22P02 from a COPY row, then SELECT 1'
end
check('error_25P02') do
  $conn.exec('BEGIN')
  begin
    $conn.exec_params('SELECT 1/$1', [0])
    raise Mismatch, 'no error'
  rescue PG::Error => e
    expect_eq(sqlstate(e), '22012', 'first error')
  end
  begin
    $conn.exec('SELECT 1')
    raise Mismatch, 'no 25P02'
  rescue PG::InFailedSqlTransaction => e
    expect_eq(sqlstate(e), '25P02', 'statement in the failed transaction')
  end
  $conn.exec('ROLLBACK')
  select1
  '22012, 25P02, ROLLBACK, SELECT 1'
end

# The roles_* checks (README.md): a role with INSERT and not SELECT on a
# topic, logged in through PG.connect with its password.
ROLE = "#{P}writer"
GRANTED = "#{P}granted"
ROLE_PASSWORD = 'writer-pw'
WRONG_PASSWORD = 'wrong-pw'

def role_connect(password)
  PG.connect(host: HOST, port: PORT, user: ROLE, password: password, dbname: 'postgres', connect_timeout: 10)
end

$rconn = nil

def role_conn
  raise Mismatch, "no connection as #{ROLE} (roles_login failed)" if $rconn.nil? || $rconn.finished?

  $rconn
end

check('roles_grant') do
  $conn.exec("CREATE ROLE #{ROLE} LOGIN PASSWORD '#{ROLE_PASSWORD}'")
  $conn.exec("CREATE TOPIC #{GRANTED}")
  $conn.exec("GRANT INSERT ON TOPIC #{GRANTED} TO #{ROLE}")
  "CREATE ROLE #{ROLE} LOGIN PASSWORD, CREATE TOPIC, GRANT INSERT ON TOPIC"
end
check('roles_login') do
  $rconn = role_connect(ROLE_PASSWORD)
  expect_eq($rconn.exec('SELECT current_user').values, [[ROLE]], 'current_user')
  "PG.connect as the role (SCRAM-SHA-256), current_user #{ROLE}"
end
check('roles_insert') do
  res = role_conn.exec_params("INSERT INTO #{GRANTED} (data) VALUES ($1)", [{ value: 'by-role', format: 1 }])
  expect_eq([res.cmd_status, res.cmd_tuples], ['INSERT 0 1', 1], 'cmd_status, cmd_tuples')
  expect_eq($conn.exec("SELECT convert_from(data, 'UTF8') FROM #{GRANTED}").values, [['by-role']], 'the message, read as the bootstrap user')
  'INSERT with a binary exec_params parameter: INSERT 0 1; read back as the bootstrap user'
end
check('roles_denied') do
  rc = role_conn
  begin
    rc.exec_params("SELECT data FROM #{GRANTED} WHERE offset >= $1", [0])
    raise Mismatch, 'the SELECT as the role succeeded'
  rescue PG::Error => e
    got = [e.result&.error_field(PG::PG_DIAG_SQLSTATE), e.result&.error_field(PG::PG_DIAG_MESSAGE_PRIMARY), e.class]
    expect_eq(got, ['42501', "permission denied for topic #{GRANTED}", PG::InsufficientPrivilege], 'SQLSTATE, message, class')
  end
  expect_eq(rc.exec('SELECT 1 AS one').values, [['1']], 'SELECT 1 after the error')
  "42501 permission denied for topic #{GRANTED} (PG::InsufficientPrivilege, error_field), SELECT 1"
end
check('roles_bad_password') do
  begin
    role_connect(WRONG_PASSWORD).close
    raise Mismatch, 'a wrong password logged in'
  rescue PG::ConnectionBad => e
    # libpq reports no SQLSTATE for a failed connection: the message.
    expect(e.message.include?("password authentication failed for user \"#{ROLE}\""), "error: #{e.message.strip}")
  end
  "'password authentication failed for user \"#{ROLE}\"' (no SQLSTATE: libpq has none for a failed connection)"
end
$rconn&.close

puts "summary #{DRIVER}: #{$passed} checks ok, #{$failed.size} failed#{$failed.empty? ? '' : " (#{$failed.join(', ')})"}"
$conn&.close
exit($failed.empty? ? 0 : 1)
