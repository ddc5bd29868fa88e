package txn

import (
	"context"
	"errors"

	"topicgate/sql/pgerror"
	"topicgate/topicstore"
)

// StoreError is the one mapping of store errors to SQLSTATEs: every
// layer that calls the store (planning a statement, running it,
// committing it) hands the store's error here with the name of the thing
// it concerns (a topic, or the topics a commit wrote). An error that
// already carries a SQLSTATE is kept; one the mapping does not know stays
// as it is and reaches the client as an internal error (XX000).
func StoreError(err error, name string) error {
	var pe *pgerror.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &pe):
		return err
	case errors.Is(err, topicstore.ErrTopicNotFound):
		return pgerror.Newf(pgerror.CodeUndefinedTable, "topic \"%s\" does not exist", name)
	case errors.Is(err, topicstore.ErrTopicExists):
		return pgerror.Newf(pgerror.CodeDuplicateTable, "topic \"%s\" already exists", name)
	case errors.Is(err, topicstore.ErrCodecNotSupported):
		return pgerror.Newf(pgerror.CodeInvalidParameterValue, "%v (topic \"%s\")", err, name)
	case errors.Is(err, topicstore.ErrMessageTooLarge):
		return pgerror.Newf(pgerror.CodeProgramLimitExceeded, "%v: the limit is %d bytes (topic \"%s\")", err, topicstore.MaxMessageSize, name)
	case errors.Is(err, topicstore.ErrProducerPartition):
		return pgerror.Newf(pgerror.CodeInvalidParameterValue, "%v (topic \"%s\")", err, name).
			WithHint("A producer's messages stay in the partition it is bound to; leave partition out, or use another producer_id.")
	case errors.Is(err, topicstore.ErrAutoPartitioning), errors.Is(err, topicstore.ErrPartitionInactive):
		return pgerror.Newf(pgerror.CodeInvalidParameterValue, "%v", err)
	case errors.Is(err, topicstore.ErrPartitionNotFound):
		return pgerror.Newf(pgerror.CodeInvalidParameterValue, "%v (topic \"%s\")", err, name)
	case errors.Is(err, topicstore.ErrPartitionsDecrease):
		return pgerror.Newf(pgerror.CodeInvalidParameterValue, "topic \"%s\": min_active_partitions cannot decrease", name)
	case errors.Is(err, topicstore.ErrConsumerExists):
		return pgerror.Newf(pgerror.CodeDuplicateObject, "%v (topic \"%s\")", err, name)
	case errors.Is(err, topicstore.ErrConsumerNotFound):
		return pgerror.Newf(pgerror.CodeUndefinedObject, "%v (topic \"%s\")", err, name)
	case errors.Is(err, topicstore.ErrPositionConflict):
		return pgerror.Newf(pgerror.CodeSerializationFailure, "could not commit: %v; retry the transaction", err)
	case errors.Is(err, topicstore.ErrOffsetOutOfRange):
		return pgerror.Newf(pgerror.CodeInvalidParameterValue, "%v", err)
	case errors.Is(err, topicstore.ErrOutcomeUnknown):
		return pgerror.Newf(pgerror.CodeTransactionResolutionUnknown, "%v", err).
			WithHint("The commit is stored whole or not at all. Retrying with the same producer_id and seqno values is safe (duplicates are skipped); writes without a producer_id may be stored twice if retried, so check the topic first.")
	case errors.Is(err, topicstore.ErrUnavailable):
		return pgerror.Newf(pgerror.CodeCannotConnectNow, "%v", err).
			WithHint("Nothing of the statement was stored. The cluster needs a majority of its nodes; the statement may be retried once it has one.")
	case errors.Is(err, topicstore.ErrUnsupported):
		return pgerror.Newf(pgerror.CodeFeatureNotSupported, "%v (topic \"%s\")", err, name)
	case errors.Is(err, context.Canceled):
		return pgerror.New(pgerror.CodeQueryCanceled, "canceling statement due to user request")
	}
	return err
}

// CommitError maps a refused commit. A consumer (or its topic) dropped,
// a partition gone or a shared lock expired while the transaction read
// from it is a conflict like any other position change: 40001, nothing
// published, the client retries.
func CommitError(err error, topics string) error {
	if errors.Is(err, topicstore.ErrConsumerNotFound) || errors.Is(err, topicstore.ErrPartitionNotFound) ||
		errors.Is(err, topicstore.ErrLockExpired) || errors.Is(err, topicstore.ErrStagingSwept) {
		return pgerror.Newf(pgerror.CodeSerializationFailure, "could not commit: %v; retry the transaction", err)
	}
	return StoreError(err, topics)
}

// IsConflict reports whether err, mapped or not, is a serialization
// failure (40001) that a retry may cure.
func IsConflict(err error) bool {
	return errors.Is(err, topicstore.ErrPositionConflict) || pgerror.Code(err) == pgerror.CodeSerializationFailure
}
