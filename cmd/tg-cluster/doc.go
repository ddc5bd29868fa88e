// Command tg-cluster runs a local NATS JetStream cluster for topicgate: real
// nats-server nodes built from the version go.mod pins (see
// topicstore/jetstream/natsnode).
//
//	go run ./cmd/tg-cluster -dir /tmp/tgc              # 3 nodes on 4222-4224 until SIGINT/SIGTERM
//	go run ./cmd/tg-cluster -dir /tmp/tgc -sync always # fsync every write
//	go run ./cmd/tg-cluster bench                      # the engine's ceiling on a fresh cluster
//	go run ./cmd/tg-cluster bench -store nats://...    # ... or on a running one
//
// The first form prints one line on stdout, the --store value for topicgate
// (e.g. nats://127.0.0.1:4222,nats://127.0.0.1:4223,nats://127.0.0.1:4224),
// and the nodes' ports, directories and logs on stderr. Without -dir the
// data lives in a temporary directory removed on exit; with -dir it stays,
// and a later run on the same directory brings the same cluster back.
//
// It owns no process management of its own: natsnode starts, watches and
// stops the nodes (the same code the tests run through jstest), so a
// tg-cluster killed with SIGKILL takes its nodes with it (Pdeathsig), and
// SIGINT or SIGTERM stops them gracefully before it exits. The bench
// subcommand is jsbench's Run; it prints one line per mode.
package main
