package jetstream

import (
	"context"

	"topicgate/topicstore/jetstream/catalog"
)

// What the topic catalog (jetstream/catalog) needs of the store beyond
// what host.go gives the other rooms: the fold caught up, after a
// refusal or outright, and the wait for a leader after an election left
// a publish without one, as the commit protocol does them.

var _ catalog.Host = host{}

func (h host) Sync(ctx context.Context) error { return h.s.io.sync(ctx) }

func (h host) CatchUp(refusal error) error { return h.s.catchUp(refusal) }

func (h host) NoLeader(err error) bool { return noLeader(err) }

func (h host) AwaitLeader(attempt int) { h.s.awaitLeader(attempt) }
