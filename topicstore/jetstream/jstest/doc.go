// Package jstest gives a test its own real NATS JetStream cluster: n
// nats-server child processes (natsnode) in the test's temp directory,
// healthy and with a JetStream meta leader before Start returns, stopped when
// the test ends, with their logs printed if it failed.
//
// It owns nothing but that lifecycle and the waits around it: every method
// fails the test instead of returning an error, every wait polls with a
// deadline (WaitTimeout) and never sleeps a fixed time, and MetaLeader and
// StreamLeader wait until a *running* node leads. The server binary is built
// once per test binary from the version go.mod pins.
//
// The tests of this package verify, against a three-node R3 cluster, the
// JetStream behaviour the store is designed on (see the jetstream package's
// doc for the list), and measure failure detection.
package jstest
