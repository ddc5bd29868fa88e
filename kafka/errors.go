package kafka

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"

	"topicgate/planner/plantree"
	"topicgate/sql/pgerror"
	"topicgate/topicstore"
)

// codeOf maps an error of the store (or of the door's own checks) to the
// Kafka error code a client acts on: retriable codes only where a retry
// can succeed.
func codeOf(err error) int16 {
	var ke *kerr.Error
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ke):
		return ke.Code
	case errors.Is(err, topicstore.ErrTopicNotFound), errors.Is(err, topicstore.ErrPartitionNotFound):
		return kerr.UnknownTopicOrPartition.Code
	case errors.Is(err, topicstore.ErrMessageTooLarge):
		return kerr.MessageTooLarge.Code
	case errors.Is(err, topicstore.ErrPartitionInactive), errors.Is(err, topicstore.ErrAutoPartitioning):
		return kerr.InvalidTopicException.Code
	case errors.Is(err, topicstore.ErrOffsetOutOfRange):
		return kerr.OffsetOutOfRange.Code
	case errors.Is(err, topicstore.ErrUnavailable):
		// Nothing was stored: a retry is safe.
		return kerr.NotEnoughReplicas.Code
	case errors.Is(err, topicstore.ErrOutcomeUnknown), errors.Is(err, context.DeadlineExceeded):
		// Stored whole or not at all; the client retries, as after a
		// Kafka request that timed out (a duplicate is possible without
		// an idempotent producer, as with Kafka).
		return kerr.RequestTimedOut.Code
	case errors.Is(err, topicstore.ErrCorrupt):
		return kerr.CorruptMessage.Code
	case pgerror.Code(err) == pgerror.CodeInsufficientPrivilege:
		return kerr.TopicAuthorizationFailed.Code
	}
	return kerr.UnknownServerError.Code
}

// doorError is a refusal of the door's own with the Kafka error it is
// answered with and words for the protocol's error message fields.
type doorError struct {
	kerr *kerr.Error
	msg  string
}

func (e *doorError) Error() string { return e.msg }
func (e *doorError) Unwrap() error { return e.kerr }

func refuse(code *kerr.Error, format string, args ...any) error {
	return &doorError{kerr: code, msg: fmt.Sprintf(format, args...)}
}

// messageOf is the error message for err, nil for none.
func messageOf(err error) *string {
	if err == nil {
		return nil
	}
	s := err.Error()
	return &s
}

// authorize runs authz's check of the connection's identity for reading
// (SELECT) or writing (INSERT) topic; nil when allowed.
func (c *conn) authorize(ctx context.Context, topic string, write bool) error {
	if c.s.cfg.Auth == nil {
		return nil
	}
	acc := plantree.Access{Topic: topic, Read: !write, Insert: write}
	return c.s.cfg.Auth.Check(ctx, c.id, []plantree.Access{acc})
}

// describable is Kafka's DESCRIBE check on topic, for Metadata: SELECT
// or INSERT on it (Kafka's READ and WRITE each imply DESCRIBE), so a
// role that may only produce finds the topic's partitions.
func (c *conn) describable(ctx context.Context, topic string) error {
	err := c.authorize(ctx, topic, false)
	if err != nil && c.authorize(ctx, topic, true) == nil {
		return nil
	}
	return err
}

// servable refuses a topic Kafka clients cannot be served: an
// auto-partitioned one, whose splits a client's partitioner (a key's hash
// modulo the partition count) cannot follow. YDB's Kafka API refuses them
// too.
func servable(info *topicstore.TopicInfo) error {
	s := strings.ToLower(info.Config.AutoPartitioningStrategy)
	split := false
	for _, p := range info.Partitions {
		split = split || p.Keyed || !p.Active
	}
	if (s != "" && s != "disabled") || split {
		return refuse(kerr.InvalidTopicException,
			"topic %s is auto-partitioned (auto_partitioning_strategy = %s): Kafka clients cannot follow its splits, so the Kafka door does not serve it",
			info.Config.Name, info.Config.AutoPartitioningStrategy)
	}
	return nil
}

// servedTopic is topic as Produce (write), Fetch and ListOffsets serve
// it: it exists, the door serves it (servable) and the connection may
// write or read it (authorize); the first that fails is the error.
func (c *conn) servedTopic(ctx context.Context, topic string, write bool) (topicstore.TopicInfo, error) {
	info, err := c.s.cfg.Store.Topic(topic)
	if err == nil {
		err = servable(&info)
	}
	if err == nil {
		err = c.authorize(ctx, topic, write)
	}
	return info, err
}
