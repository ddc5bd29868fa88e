package jetstream

import (
	"context"

	"topicgate/topicstore"
)

// The store's topic catalog is the subpackage catalog's (jetstream/
// catalog: catalog changes as conditional records, drops and the purge of
// what a dropped topic leaves, splits, write rates, the role catalog), on
// the store's lock and cluster I/O through host_catalog.go.

// CreateTopic implements topicstore.Store (catalog.Catalog.CreateTopic).
func (s *Store) CreateTopic(ctx context.Context, cfg topicstore.TopicConfig) error {
	return s.catalog.CreateTopic(ctx, cfg)
}

// AlterTopic implements topicstore.Store, with the embedded store's rules.
func (s *Store) AlterTopic(ctx context.Context, name string, fn func(*topicstore.TopicConfig) error) error {
	return s.catalog.AlterTopic(ctx, name, fn)
}

// DropTopic implements topicstore.Store: a catalog message, then the
// purge of the topic's messages (catalog.Catalog.DropTopic).
func (s *Store) DropTopic(ctx context.Context, name string) error {
	return s.catalog.DropTopic(ctx, name)
}

// Topic implements topicstore.Store.
func (s *Store) Topic(name string) (topicstore.TopicInfo, error) {
	return s.catalog.Topic(name)
}

// PartitionCount implements topicstore.PartitionCounter.
func (s *Store) PartitionCount(name string) (int, error) {
	return s.catalog.PartitionCount(name)
}

// TopicConfig implements topicstore.Configer.
func (s *Store) TopicConfig(name string) (topicstore.TopicConfig, error) {
	return s.catalog.TopicConfig(name)
}

// Topics implements topicstore.Store.
func (s *Store) Topics() []topicstore.TopicInfo {
	return s.catalog.Topics()
}

// SplitPartition implements topicstore.Store: one catalog change, with
// the embedded store's rules (catalog.Catalog.SplitPartition).
func (s *Store) SplitPartition(ctx context.Context, topic string, partition int32) error {
	return s.catalog.SplitPartition(ctx, topic, partition)
}

// WriteRates implements topicstore.Store: the fold's meters, the same on
// every gateway.
func (s *Store) WriteRates(topic string) ([]float64, error) {
	return s.catalog.WriteRates(topic)
}

var _ topicstore.RoleStore = (*Store)(nil)

// Roles implements topicstore.RoleStore: this gateway's fold's view of
// the role catalog (after Barrier it includes every change acknowledged
// before; catalog.Catalog.Roles).
func (s *Store) Roles() ([]byte, uint64) { return s.catalog.Roles() }

// SetRoles implements topicstore.RoleStore: a message conditional on the
// role catalog's subject, its stream sequence the new version
// (catalog.Catalog.SetRoles).
func (s *Store) SetRoles(ctx context.Context, expect uint64, doc []byte) (uint64, error) {
	return s.catalog.SetRoles(ctx, expect, doc)
}
