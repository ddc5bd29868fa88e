// This package is also where the front-door tests live: they start the
// server in-process on 127.0.0.1:0 (startTestServer) or as a child process
// that can be killed with SIGKILL (crashServer), and drive it with pgx,
// pgconn and psql:
//
//   - TestLogic runs the SQL logic tests in ../../testdata (-rewrite
//     regenerates their expected output);
//   - TestPGTest replays the protocol scripts of ../../testdata/pgtest,
//     recorded from a real PostgreSQL 15 (-rewrite starts one and records
//     them again; see package wire/pgtest);
//   - pgx_test, consumer_test, shared_test, retention_test, bigtxn_test,
//     handoff_test (graceful partition handoff), split_read_test (reading
//     in order across splits):
//     multi-connection behaviour through a real driver;
//   - psql_test: the real psql client;
//   - crash_test, crash_consumer_test, crash_shared_test, jepsen_test:
//     durability and transactional guarantees across kill -9;
//   - cluster_gateways_test, cluster_faults_test, cluster_crash_test,
//     cluster_misconfig_test (TestCluster*): each starts a three-node
//     JetStream cluster of its own and gateways on it (in-process, or
//     child processes to SIGKILL), whatever TOPICGATE_TEST_STORE says:
//     two gateways acting as one server, node faults under load, gateway
//     and node kills under mixed load, refused misconfigurations.
package main
