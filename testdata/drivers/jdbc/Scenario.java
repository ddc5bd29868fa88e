// pgjdbc scenario: PreparedStatement with pgjdbc's own parameter types
// (setString binds varchar, setLong int8, setBytes bytea), server-side
// prepared statements past prepareThreshold, setAutoCommit(false) +
// commit/rollback, CopyManager, and errors on the extended and the simple
// (preferQueryMode=simple) protocol.
import java.io.StringReader;
import java.io.StringWriter;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Properties;

import org.postgresql.PGConnection;
import org.postgresql.copy.CopyManager;
import org.postgresql.util.PGobject;

public class Scenario {
    static final String DRIVER = "pgjdbc";
    static final String P = env("TOPICGATE_PREFIX", "drv_jdbc_" + ProcessHandle.current().pid() + "_" + System.currentTimeMillis() / 1000 + "_");
    static final String HOST = env("TOPICGATE_HOST", "127.0.0.1");
    static final String PORT = env("TOPICGATE_PORT", "5433");
    static final String USER = env("TOPICGATE_USER", "postgres");
    static final String PASSWORD = env("TOPICGATE_PASSWORD", null); // null: the server trusts
    static final byte[] DATA64K = new byte[64 * 1024];
    static {
        for (int i = 0; i < DATA64K.length; i++) DATA64K[i] = (byte) (i % 256);
    }

    static String env(String k, String def) {
        String v = System.getenv(k);
        return v == null || v.isEmpty() ? def : v;
    }

    static class Mismatch extends Exception {
        Mismatch(String m) { super(m); }
    }

    interface Check { String run() throws Exception; }

    static Connection conn;
    static final List<String> failed = new ArrayList<>();
    static int passed;

    static Connection open(String mode) throws SQLException {
        Properties p = new Properties();
        p.setProperty("user", USER);
        if (PASSWORD != null) p.setProperty("password", PASSWORD);
        p.setProperty("connectTimeout", "10");
        p.setProperty("preferQueryMode", mode);
        return DriverManager.getConnection("jdbc:postgresql://" + HOST + ":" + PORT + "/postgres", p);
    }

    static void healthy() {
        try {
            if (conn == null || conn.isClosed()) { conn = open("extended"); return; }
            if (!conn.getAutoCommit()) { conn.rollback(); conn.setAutoCommit(true); }
            try (Statement st = conn.createStatement()) { st.execute("SELECT 1"); }
        } catch (SQLException e) {
            try { conn = open("extended"); } catch (SQLException e2) { /* the check will fail */ }
        }
    }

    static void check(String name, Check c) {
        if (!name.equals("connect")) healthy();
        try {
            String detail = c.run();
            passed++;
            System.out.println("ok " + name + ": " + (detail == null ? "" : detail));
        } catch (Mismatch e) {
            failed.add(name);
            System.out.println("FAIL " + name + ": " + e.getMessage());
        } catch (Exception e) {
            failed.add(name);
            String code = e instanceof SQLException ? " [" + ((SQLException) e).getSQLState() + "]" : "";
            System.out.println("FAIL " + name + ": " + e.getClass().getSimpleName() + code + ": " + String.valueOf(e.getMessage()).trim().replace("\n", " | "));
            if (System.getenv("TOPICGATE_TRACE") != null) e.printStackTrace();
        }
        System.out.flush();
    }

    static void expect(boolean cond, String what) throws Mismatch {
        if (!cond) throw new Mismatch(what);
    }

    static void expectEq(Object got, Object want, String what) throws Mismatch {
        if (!Objects.equals(got, want)) throw new Mismatch(what + ": got " + got + ", want " + want);
    }

    static void select1(Connection c) throws Exception {
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT 1")) {
            expect(rs.next() && rs.getInt(1) == 1, "SELECT 1 after the error");
        }
    }

    static List<String> rows(ResultSet rs) throws SQLException {
        List<String> out = new ArrayList<>();
        int n = rs.getMetaData().getColumnCount();
        while (rs.next()) {
            StringBuilder sb = new StringBuilder();
            for (int i = 1; i <= n; i++) {
                if (i > 1) sb.append('|');
                sb.append(rs.getString(i));
            }
            out.add(sb.toString());
        }
        rs.close();
        return out;
    }

    static List<String> consume(int n) throws SQLException {
        try (PreparedStatement ps = conn.prepareStatement("SELECT offset, data FROM " + P + "in WITH (CONSUMER = c) LIMIT ?")) {
            ps.setInt(1, n);
            List<String> out = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) out.add(rs.getLong(1) + ":" + new String(rs.getBytes(2)));
            }
            return out;
        }
    }

    static Check expectError(Connection c, String sql, Object param, String code) {
        return () -> {
            try {
                if (param == null) {
                    try (Statement st = c.createStatement()) { st.execute(sql); }
                } else {
                    try (PreparedStatement ps = c.prepareStatement(sql)) {
                        ps.setObject(1, param);
                        ps.execute();
                    }
                }
            } catch (SQLException e) {
                expectEq(e.getSQLState(), code, "SQLSTATE of " + sql + " (" + e.getMessage() + ")");
                select1(c);
                return code + ", then SELECT 1";
            }
            throw new Mismatch("no error from " + sql);
        };
    }

    static final String INSERT = "INSERT INTO %sin (producer_id, seqno, data, attrs) VALUES (?, ?, ?, ?)";

    public static void main(String[] args) throws Exception {
        System.out.println("version " + DRIVER + " " + org.postgresql.util.DriverInfo.DRIVER_VERSION + " (java " + System.getProperty("java.version") + ")");
        check("connect", () -> {
            conn = open("extended");
            select1(conn);
            return "server_version " + conn.getMetaData().getDatabaseProductVersion();
        });
        if (conn == null) finish();

        check("create_topics", () -> {
            try (Statement st = conn.createStatement()) {
                for (String t : new String[] {"in (CONSUMER c)", "out", "bin", "copy"}) st.execute("CREATE TOPIC " + P + t);
            }
            return "4 topics";
        });

        check("insert_params", () -> {
            try (PreparedStatement ps = conn.prepareStatement(String.format(INSERT, P))) {
                for (int i = 1; i <= 5; i++) {
                    ps.setString(1, "prod");
                    ps.setLong(2, i);
                    ps.setBytes(3, ("m" + i).getBytes());
                    ps.setObject(4, "{\"k\":\"v\"}", Types.OTHER);
                    expectEq(ps.executeUpdate(), 1, "update count of INSERT seqno " + i);
                }
                ps.setString(1, "prod");
                ps.setLong(2, 3);
                ps.setBytes(3, "dup".getBytes());
                ps.setObject(4, "{\"k\":\"v\"}", Types.OTHER);
                expectEq(ps.executeUpdate(), 0, "update count of the duplicate (prod, 3)");
            }
            return "setString (varchar), setLong, setBytes, setObject(OTHER): 5 inserts count 1, duplicate counts 0";
        });

        check("insert_prepared", () -> {
            // Past prepareThreshold (5) pgjdbc switches to a named server-side statement.
            try (PreparedStatement ps = conn.prepareStatement(String.format(INSERT, P))) {
                for (int i = 6; i <= 10; i++) {
                    ps.setString(1, "prod");
                    ps.setInt(2, i);
                    ps.setBytes(3, ("m" + i).getBytes());
                    ps.setObject(4, "{\"k\":\"v\"}", Types.OTHER);
                    expectEq(ps.executeUpdate(), 1, "update count of INSERT seqno " + i);
                }
                ps.setString(1, "prod");
                ps.setInt(2, 6);
                ps.setBytes(3, "dup".getBytes());
                ps.setObject(4, "{\"k\":\"v\"}", Types.OTHER);
                expectEq(ps.executeUpdate(), 0, "update count of the duplicate (prod, 6)");
            }
            return "setInt (int4 into int8 seqno); duplicate counts 0";
        });

        check("pgobject_jsonb", () -> {
            // A PGobject names its type: pgjdbc looks the name up in pg_type.
            try (PreparedStatement ps = conn.prepareStatement("INSERT INTO " + P + "out (data, attrs) VALUES (?, ?)")) {
                PGobject j = new PGobject();
                j.setType("jsonb");
                j.setValue("{\"k\":\"v\"}");
                ps.setBytes(1, "obj".getBytes());
                ps.setObject(2, j);
                expectEq(ps.executeUpdate(), 1, "update count");
            }
            return "INSERT with a PGobject(jsonb) parameter";
        });

        check("batch_insert", () -> {
            try (PreparedStatement ps = conn.prepareStatement("INSERT INTO " + P + "out (producer_id, seqno, data) VALUES (?, ?, ?)")) {
                for (long s : new long[] {1, 2, 2}) {
                    ps.setString(1, "batch");
                    ps.setLong(2, s);
                    ps.setBytes(3, ("b" + s).getBytes());
                    ps.addBatch();
                }
                int[] counts = ps.executeBatch();
                expectEq(Arrays.toString(counts), "[1, 1, 0]", "executeBatch counts");
            }
            return "executeBatch [1, 1, 0]";
        });

        check("varchar_types", () -> {
            try (PreparedStatement ps = conn.prepareStatement("SELECT ?::varchar AS v, CAST('b' AS varchar) AS w, ? AS x")) {
                ps.setString(1, "a");
                ps.setString(2, "c");
                try (ResultSet rs = ps.executeQuery()) {
                    ResultSetMetaData md = rs.getMetaData();
                    expectEq(md.getColumnTypeName(1) + "," + md.getColumnTypeName(2) + "," + md.getColumnTypeName(3), "varchar,varchar,varchar", "result column types");
                    expect(rs.next(), "no row");
                    expectEq(rs.getString(1) + rs.getString(2) + rs.getString(3), "abc", "values");
                }
            }
            return "?::varchar, CAST(... AS varchar) and a bare varchar parameter are varchar columns";
        });

        check("bytea_roundtrip", () -> {
            try (PreparedStatement ps = conn.prepareStatement("INSERT INTO " + P + "bin (data) VALUES (?)")) {
                ps.setBytes(1, DATA64K);
                expectEq(ps.executeUpdate(), 1, "update count");
            }
            try (Statement st = conn.createStatement(); ResultSet rs = st.executeQuery("SELECT data FROM " + P + "bin")) {
                expect(rs.next(), "no row");
                byte[] got = rs.getBytes(1);
                expect(Arrays.equals(got, DATA64K), "64 KiB bytea differs (got " + got.length + " bytes)");
            }
            return "65536 bytes";
        });

        check("jsonb_attrs", () -> {
            try (PreparedStatement ps = conn.prepareStatement("SELECT attrs, attrs->>'k' FROM " + P + "in WHERE seqno = ?")) {
                ps.setLong(1, 1);
                try (ResultSet rs = ps.executeQuery()) {
                    expect(rs.next(), "no row");
                    expectEq(rs.getString(1).replace(" ", ""), "{\"k\":\"v\"}", "attrs");
                    expectEq(rs.getString(2), "v", "attrs->>'k'");
                }
            }
            return "attrs {\"k\": \"v\"}";
        });

        check("jsonb_type_name", () -> {
            // pgjdbc knows jsonb's OID only through pg_type.
            try (Statement st = conn.createStatement(); ResultSet rs = st.executeQuery("SELECT attrs FROM " + P + "in LIMIT 1")) {
                expectEq(rs.getMetaData().getColumnTypeName(1), "jsonb", "attrs type name");
            }
            return "ResultSetMetaData.getColumnTypeName: jsonb";
        });

        check("timestamptz_param", () -> {
            java.time.OffsetDateTime ts = java.time.OffsetDateTime.of(2026, 1, 2, 3, 4, 5, 123456000, java.time.ZoneOffset.UTC);
            try (PreparedStatement ps = conn.prepareStatement("INSERT INTO " + P + "bin (data, created_at, message_group_id) VALUES (?, ?, ?)")) {
                ps.setBytes(1, "ts".getBytes());
                ps.setObject(2, ts);
                ps.setString(3, "g1");
                expectEq(ps.executeUpdate(), 1, "update count (OffsetDateTime)");
                ps.setBytes(1, "ts2".getBytes());
                ps.setTimestamp(2, java.sql.Timestamp.from(ts.toInstant()));
                ps.setString(3, "g2");
                expectEq(ps.executeUpdate(), 1, "update count (java.sql.Timestamp)");
            }
            try (PreparedStatement ps = conn.prepareStatement("SELECT created_at, message_group_id FROM " + P + "bin WHERE written_at >= ? AND message_group_id IS NOT NULL ORDER BY offset")) {
                ps.setObject(1, ts);
                List<String> got = new ArrayList<>();
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) got.add(rs.getObject(1, java.time.OffsetDateTime.class).toInstant() + "|" + rs.getString(2));
                }
                expectEq(got, List.of("2026-01-02T03:04:05.123456Z|g1", "2026-01-02T03:04:05.123456Z|g2"), "created_at read back");
            }
            return "setObject(OffsetDateTime) and setTimestamp into created_at; written_at >= ?";
        });

        check("setstring_jsonb_bytea", () -> {
            // DESIGN.md §5: a varchar parameter is accepted where jsonb or
            // bytea is expected (PostgreSQL itself refuses it with 42804).
            try (PreparedStatement ps = conn.prepareStatement("INSERT INTO " + P + "bin (data, attrs, message_group_id) VALUES (?, ?, ?)")) {
                ps.setString(1, "str");
                ps.setString(2, "{\"k\":\"s\"}");
                ps.setString(3, "g3");
                expectEq(ps.executeUpdate(), 1, "update count");
            }
            try (Statement st = conn.createStatement()) {
                expectEq(rows(st.executeQuery("SELECT convert_from(data, 'UTF8'), attrs->>'k' FROM " + P + "bin WHERE message_group_id = 'g3'")), List.of("str|s"), "row");
            }
            return "setString into bytea and jsonb";
        });

        check("uuid_param", () -> {
            // setObject(UUID) declares uuid (2950) and sends 16 binary bytes;
            // PostgreSQL casts it to text in an INSERT and with ::text.
            java.util.UUID u = java.util.UUID.fromString("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11");
            try (PreparedStatement ps = conn.prepareStatement("INSERT INTO " + P + "bin (data, message_group_id) VALUES (?, ?)")) {
                ps.setBytes(1, "uuid".getBytes());
                ps.setObject(2, u);
                expectEq(ps.executeUpdate(), 1, "update count");
            }
            try (PreparedStatement ps = conn.prepareStatement("SELECT ?::text, count(*) FROM " + P + "bin WHERE message_group_id = ?::text")) {
                ps.setObject(1, u);
                ps.setObject(2, u);
                expectEq(rows(ps.executeQuery()), List.of(u + "|1"), "uuid as text");
            }
            return "setObject(UUID) into message_group_id and as ?::text";
        });

        check("stringtype_unspecified", () -> {
            // A common pgjdbc setting: strings go untyped (0), so setString
            // works into jsonb too, as PostgreSQL infers the type.
            Properties p = new Properties();
            p.setProperty("user", USER);
            if (PASSWORD != null) p.setProperty("password", PASSWORD);
            p.setProperty("stringtype", "unspecified");
            try (Connection c = DriverManager.getConnection("jdbc:postgresql://" + HOST + ":" + PORT + "/postgres", p);
                 PreparedStatement ps = c.prepareStatement("INSERT INTO " + P + "bin (producer_id, seqno, data, attrs) VALUES (?, ?, ?, ?)")) {
                for (int i = 1; i <= 6; i++) { // past prepareThreshold
                    ps.setString(1, "unspec");
                    ps.setString(2, String.valueOf(i));
                    ps.setBytes(3, "u".getBytes());
                    ps.setString(4, "{\"k\":\"v\"}");
                    expectEq(ps.executeUpdate(), 1, "update count " + i);
                }
                ps.setString(1, "unspec");
                ps.setString(2, "6");
                ps.setBytes(3, "dup".getBytes());
                ps.setString(4, "{}");
                expectEq(ps.executeUpdate(), 0, "update count of the duplicate");
            }
            return "stringtype=unspecified: setString into text, int8 and jsonb; duplicate counts 0";
        });

        check("stateless_read", () -> {
            try (Statement st = conn.createStatement()) {
                List<String> want = new ArrayList<>();
                for (int i = 1; i <= 10; i++) want.add(i + "|m" + i);
                expectEq(rows(st.executeQuery("SELECT seqno, convert_from(data, 'UTF8') FROM " + P + "in ORDER BY offset")), want, "all messages");
            }
            try (PreparedStatement ps = conn.prepareStatement("SELECT offset FROM " + P + "in WHERE offset >= ? ORDER BY offset LIMIT ?")) {
                ps.setLong(1, 7);
                ps.setInt(2, 2);
                expectEq(rows(ps.executeQuery()), List.of("7", "8"), "offset >= 7 LIMIT 2");
            }
            try (PreparedStatement ps = conn.prepareStatement("SELECT offset FROM " + P + "in WHERE producer_id = ? AND seqno = ?")) {
                ps.setString(1, "prod");
                ps.setLong(2, 3);
                expectEq(rows(ps.executeQuery()), List.of("2"), "the original of the duplicate");
            }
            return "10 rows in order; WHERE/LIMIT parameters";
        });

        check("array_param", () -> {
            try (PreparedStatement ps = conn.prepareStatement("SELECT count(*) FROM " + P + "in WHERE partition = ANY(?) AND offset = ANY(?)")) {
                ps.setArray(1, conn.createArrayOf("int8", new Long[] {0L, 5L}));
                ps.setObject(2, new long[] {0, 1, 2});
                expectEq(rows(ps.executeQuery()), List.of("3"), "count");
            }
            return "createArrayOf(int8) and a long[] with = ANY";
        });

        check("fetch_size", () -> {
            conn.setAutoCommit(false); // pgjdbc uses a portal with a row limit only in a transaction
            try (Statement st = conn.createStatement()) {
                st.setFetchSize(3);
                List<String> got = rows(st.executeQuery("SELECT seqno FROM " + P + "in ORDER BY offset"));
                expectEq(got.size(), 10, "rows through fetchSize 3");
            } finally {
                conn.commit();
                conn.setAutoCommit(true);
            }
            return "10 rows in pages of 3 (Execute with a row limit, PortalSuspended)";
        });

        check("consumer_read", () -> {
            expectEq(consume(3), List.of("0:m1", "1:m2", "2:m3"), "first consumer read");
            expectEq(consume(3), List.of("3:m4", "4:m5", "5:m6"), "second consumer read");
            return "offsets 0-2 then 3-5";
        });

        check("rpw_txn", () -> {
            conn.setAutoCommit(false);
            try {
                List<String> got = consume(2);
                expectEq(got, List.of("6:m7", "7:m8"), "read in the transaction");
                try (PreparedStatement ps = conn.prepareStatement("INSERT INTO " + P + "out (producer_id, seqno, data) VALUES (?, ?, ?)")) {
                    for (String g : got) {
                        String[] kv = g.split(":");
                        ps.setString(1, "rpw");
                        ps.setLong(2, Long.parseLong(kv[0]));
                        ps.setBytes(3, kv[1].toUpperCase().getBytes());
                        expectEq(ps.executeUpdate(), 1, "INSERT in the transaction");
                    }
                }
                conn.commit();
            } finally {
                if (!conn.getAutoCommit()) { try { conn.rollback(); } catch (SQLException e) { } conn.setAutoCommit(true); }
            }
            try (Statement st = conn.createStatement()) {
                expectEq(rows(st.executeQuery("SELECT seqno, convert_from(data, 'UTF8') FROM " + P + "out WHERE producer_id = 'rpw' ORDER BY offset")), List.of("6|M7", "7|M8"), "committed output");
            }
            return "read 6-7, wrote 2, committed";
        });

        check("rollback_rewind", () -> {
            conn.setAutoCommit(false);
            try {
                expectEq(consume(2), List.of("8:m9", "9:m10"), "read in the transaction");
                try (PreparedStatement ps = conn.prepareStatement("INSERT INTO " + P + "out (data) VALUES (?)")) {
                    ps.setBytes(1, "never".getBytes());
                    ps.executeUpdate();
                }
                conn.rollback();
            } finally {
                conn.setAutoCommit(true);
            }
            expectEq(consume(10), List.of("8:m9", "9:m10"), "read again after rollback");
            try (Statement st = conn.createStatement()) {
                expectEq(rows(st.executeQuery("SELECT count(*) FROM " + P + "out WHERE data = 'never'")), List.of("0"), "rolled-back message");
            }
            return "8-9 read again, nothing written";
        });

        check("copy_in", () -> {
            CopyManager cm = conn.unwrap(PGConnection.class).getCopyAPI();
            long n = cm.copyIn("COPY " + P + "copy (producer_id, seqno, data) FROM STDIN", new StringReader("cp\t1\tc1\ncp\t2\tc2\ncp\t2\tdup\n"));
            expectEq(n, 2L, "rows copied (the duplicate skipped)");
            try (Statement st = conn.createStatement()) {
                expectEq(rows(st.executeQuery("SELECT seqno, convert_from(data, 'UTF8') FROM " + P + "copy ORDER BY offset")), List.of("1|c1", "2|c2"), "copied rows");
            }
            return "CopyManager.copyIn: 2";
        });

        check("copy_out", () -> {
            CopyManager cm = conn.unwrap(PGConnection.class).getCopyAPI();
            StringWriter w = new StringWriter();
            long n = cm.copyOut("COPY (SELECT seqno, convert_from(data, 'UTF8') FROM " + P + "copy ORDER BY offset) TO STDOUT", w);
            expectEq(w.toString(), "1\tc1\n2\tc2\n", "COPY TO STDOUT");
            expectEq(n, 2L, "rows");
            return "CopyManager.copyOut: 2 rows";
        });

        check("error_42601_extended", expectError(conn, "SELEC ?", 1, "42601"));
        check("error_42P01_extended", expectError(conn, "SELECT * FROM " + P + "missing WHERE offset = ?", 1L, "42P01"));
        check("error_22012_extended", expectError(conn, "SELECT 1/?", 0, "22012"));
        check("error_bad_param", expectError(conn, "SELECT offset FROM " + P + "in WHERE seqno = ?::int8", "abc", "22P02"));
        check("error_copy", () -> {
            CopyManager cm = conn.unwrap(PGConnection.class).getCopyAPI();
            try {
                cm.copyIn("COPY " + P + "copy (producer_id, seqno, data) FROM STDIN", new StringReader("cp\tabc\tbad\n"));
            } catch (SQLException e) {
                expectEq(e.getSQLState(), "22P02", "SQLSTATE of the COPY");
                select1(conn);
                return "22P02 from a COPY row, then SELECT 1";
            }
            throw new Mismatch("no error from a COPY row with seqno 'abc'");
        });
        check("error_25P02", () -> {
            conn.setAutoCommit(false);
            try (Statement st = conn.createStatement()) {
                try { st.execute("SELECT 1/0"); throw new Mismatch("no error"); }
                catch (SQLException e) { expectEq(e.getSQLState(), "22012", "first error"); }
                try { st.execute("SELECT 1"); throw new Mismatch("no 25P02"); }
                catch (SQLException e) { expectEq(e.getSQLState(), "25P02", "statement in the failed transaction"); }
                conn.rollback();
            } finally {
                conn.setAutoCommit(true);
            }
            select1(conn);
            return "22012, 25P02, rollback, SELECT 1";
        });

        Connection simple = null;
        try {
            simple = open("simple");
        } catch (SQLException e) {
            check("connect_simple", () -> { throw e; });
        }
        if (simple != null) {
            Connection s = simple;
            check("error_42601_simple", expectError(s, "SELEC 1", null, "42601"));
            check("error_42P01_simple", expectError(s, "SELECT * FROM " + P + "missing", null, "42P01"));
            check("error_22012_simple", expectError(s, "SELECT 1/0", null, "22012"));
            check("error_bad_param_simple", expectError(s, "SELECT offset FROM " + P + "in WHERE seqno = ?", "abc", "22P02"));
            s.close();
        }
        roles();
        finish();
    }

    // The roles_* checks (README.md): a role with INSERT and not SELECT on
    // a topic, logged in through DriverManager with its password.
    static final String ROLE = P + "writer";
    static final String GRANTED = P + "granted";
    static Connection rconn;

    static Connection roleConnect(String password) throws SQLException {
        Properties p = new Properties();
        p.setProperty("user", ROLE);
        p.setProperty("password", password);
        p.setProperty("connectTimeout", "10");
        return DriverManager.getConnection("jdbc:postgresql://" + HOST + ":" + PORT + "/postgres", p);
    }

    static Connection roleConn() throws Mismatch {
        if (rconn == null) throw new Mismatch("no connection as " + ROLE + " (roles_login failed)");
        return rconn;
    }

    static void roles() throws SQLException {
        check("roles_grant", () -> {
            try (Statement st = conn.createStatement()) {
                st.execute("CREATE ROLE " + ROLE + " LOGIN PASSWORD 'writer-pw'");
                st.execute("CREATE TOPIC " + GRANTED);
                st.execute("GRANT INSERT ON TOPIC " + GRANTED + " TO " + ROLE);
            }
            return "CREATE ROLE " + ROLE + " LOGIN PASSWORD, CREATE TOPIC, GRANT INSERT ON TOPIC";
        });
        check("roles_login", () -> {
            rconn = roleConnect("writer-pw");
            rconn.setAutoCommit(false); // the role works in explicit transactions
            try (Statement st = rconn.createStatement()) {
                expectEq(rows(st.executeQuery("SELECT current_user")), List.of(ROLE), "current_user");
            }
            rconn.rollback();
            return "DriverManager.getConnection as the role (SCRAM-SHA-256), current_user " + ROLE;
        });
        check("roles_insert", () -> {
            Connection rc = roleConn();
            try (PreparedStatement ps = rc.prepareStatement("INSERT INTO " + GRANTED + " (data) VALUES (?)")) {
                ps.setBytes(1, "by-role".getBytes());
                expectEq(ps.executeUpdate(), 1, "executeUpdate");
            }
            rc.commit();
            try (Statement st = conn.createStatement()) {
                expectEq(rows(st.executeQuery("SELECT convert_from(data, 'UTF8') FROM " + GRANTED)), List.of("by-role"), "the message, read as the bootstrap user");
            }
            return "setBytes INSERT counts 1, commit; read back as the bootstrap user";
        });
        check("roles_denied", () -> {
            Connection rc = roleConn();
            try (PreparedStatement ps = rc.prepareStatement("SELECT data FROM " + GRANTED + " WHERE offset >= ?")) {
                ps.setLong(1, 0);
                ps.executeQuery().close();
                throw new Mismatch("the SELECT as the role succeeded");
            } catch (SQLException e) {
                String msg = e instanceof org.postgresql.util.PSQLException && ((org.postgresql.util.PSQLException) e).getServerErrorMessage() != null
                        ? ((org.postgresql.util.PSQLException) e).getServerErrorMessage().getMessage() : e.getMessage();
                expectEq(e.getSQLState() + " " + msg, "42501 permission denied for topic " + GRANTED, "getSQLState(), ServerErrorMessage.getMessage()");
            }
            rc.rollback();
            select1(rc);
            rc.rollback();
            return "42501 permission denied for topic " + GRANTED + " (getSQLState), rollback, SELECT 1";
        });
        check("roles_bad_password", () -> {
            try (Connection bad = roleConnect("wrong-pw")) {
                throw new Mismatch("a wrong password logged in");
            } catch (SQLException e) {
                expectEq(e.getSQLState(), "28P01", "getSQLState() (" + e.getMessage() + ")");
            }
            return "28P01 (getSQLState)";
        });
        if (rconn != null) rconn.close();
    }

    static void finish() {
        System.out.println("summary " + DRIVER + ": " + passed + " checks ok, " + failed.size() + " failed" + (failed.isEmpty() ? "" : " (" + String.join(", ", failed) + ")"));
        System.exit(failed.isEmpty() ? 0 : 1);
    }
}
