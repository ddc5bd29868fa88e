// Command tg-cluster runs a local NATS JetStream cluster for topicgate: real
// nats-server nodes built from the version go.mod pins (see
// topicstore/jetstream/natsnode).
//
//	go run ./cmd/tg-cluster -dir /tmp/tgc               # 3 nodes on 14222-14224 until SIGINT/SIGTERM
//	go run ./cmd/tg-cluster -dir /tmp/tgc -sync default # nats-server's 2-minute sync, not every write
//	go run ./cmd/tg-cluster bench                      # the engine's ceiling on a fresh cluster
//	go run ./cmd/tg-cluster bench -store nats://...    # ... or on a running one
//
// The first form prints one line on stdout, the --store value for topicgate
// (e.g. nats://127.0.0.1:14222,nats://127.0.0.1:14223,nats://127.0.0.1:14224),
// and the nodes' ports, directories and logs on stderr. Without -dir the
// data lives in a temporary directory removed on exit; with -dir it stays,
// and a later run on the same directory brings the same cluster back.
//
// natsnode starts, watches and stops the nodes (the same code the tests
// run through jstest), so a tg-cluster killed with SIGKILL takes its nodes
// with it (Pdeathsig), and SIGINT or SIGTERM stops them gracefully before
// it exits; a node whose process exits otherwise is started again. The
// nodes fsync every write unless -sync default; the ports start at 14222,
// clear of a NATS server on its own 4222; the nats-server binary comes
// from natsnode.Binary, which also works from a built tg-cluster outside
// the checkout. The bench
// subcommand is jsbench's Run; it prints one line per mode.
package main
