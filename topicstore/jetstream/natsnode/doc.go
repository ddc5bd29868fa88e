// Package natsnode runs real nats-server nodes as child processes: the
// JetStream cluster that topicgate's tests (through jstest) and the
// tg-cluster command stand on. It owns building the server, writing each
// node's config, starting, killing, restarting and stopping the processes,
// and reading leaders from the nodes' HTTP monitoring endpoints.
//
// Invariants:
//   - The server is the nats-server version go.mod pins with a tool directive
//     (`go tool -n nats-server` builds it once into the Go build cache), never
//     a system package (Debian's 2.9 predates atomic batch publish), unless
//     $TG_NATS_SERVER names a binary.
//   - Node i keeps its directory, config and ports for the cluster's life, so
//     Restart brings back the same server with its store. Picked ports are
//     reserved (an flock per port under the temporary directory, held for
//     the process's life, ports_linux.go), so no other cluster of this or
//     another test process takes the port of a node that is down.
//   - Start and Restart return only once the node's /healthz answers 200
//     (it follows a meta leader and is current; for a restart its streams
//     have caught up too) and /jsz shows a meta group of all nodes with every
//     running one current at the leader. /healthz alone is not enough: a
//     fresh node answers 200 while it still counts a group of two, and a
//     leader killed then leaves no quorum (seen: no new leader in 30s).
//     There are no fixed sleeps, only polls with a deadline.
//   - On Linux a node cannot outlive its parent: it is forked with
//     Pdeathsig=SIGKILL from a thread that never exits (spawn_linux.go), in
//     its own process group.
//   - MetaLeader and StreamLeader name only running nodes: right after a
//     SIGKILL the survivors still report the dead leader until their
//     election timers fire, and that answer is treated as "no leader yet".
//
// Nothing here speaks the NATS client protocol; clients connect to URLs().
package natsnode
