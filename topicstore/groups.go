package topicstore

import "time"

// GroupCoordinator is implemented by a store that several gateways share
// (the JetStream store): it keeps, in the store, which gateways have read
// sessions of a streaming consumer and what those hold, so that the
// gateways divide the consumer's partitions among themselves
// (consume/cluster.go) before each balances its share over its own
// sessions. It is optional: a store that one process alone opens (the
// embedded store) does not implement it, and the executor then balances
// over its own sessions, as it always did.
//
// A group is a (topic, consumer). A gateway's membership in a group is its
// last Announce for it, and counts while the gateway is alive: the store
// renews the gateway's liveness while it runs, and a gateway that stops
// renewing (it died, or lost the cluster) drops out of every group after
// a TTL, as each other gateway's clock sees it.
type GroupCoordinator interface {
	// GatewayID is this gateway's id among the members (one per opened
	// store: a restarted gateway is a new member).
	GatewayID() string
	// Announce replaces this gateway's announcement in the group;
	// Sessions 0 leaves it. It does not block: the store publishes the
	// latest announcement of each group in the background, in order, and
	// retries until it is stored; it shows in Members once it is. It
	// fails only for a topic the store does not know, or after Close.
	Announce(topic, consumer string, a Announcement) error
	// Members returns the group's live members and membership epoch, and
	// a channel closed at the next change: an announcement stored, a
	// member that expires, a gateway that comes back. This gateway is
	// among the members once its own announcement is stored.
	Members(topic, consumer string) (GroupView, <-chan struct{}, error)
}

// Announcement is what a gateway tells the others about its read
// sessions of a group.
type Announcement struct {
	Sessions int
	// Held are the partitions its sessions hold now (sorted): the others
	// do not take them until it lets them go (or expires), so a partition
	// that moves between gateways is read by one at a time.
	Held []int32
	// Saw is the group's Epoch the gateway's assignment was computed from.
	Saw uint64
}

// GroupView is a group as the store shows it.
type GroupView struct {
	// Members are the live members (Sessions > 0, gateway alive), sorted
	// by gateway id.
	Members []GroupMember
	// Epoch identifies the group's last change of membership: a gateway
	// joining, leaving or announcing another session count (not one that
	// only holds other partitions). It only grows, but for records the
	// store forgets (a long-dead gateway's).
	Epoch uint64
}

// GroupMember is one gateway's announcement in a group.
type GroupMember struct {
	Gateway string
	Announcement
	// Until is when the member expires unless its gateway renews it.
	Until time.Time
}
