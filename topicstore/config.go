package topicstore

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// Topic configuration rules every backend applies the same way: what a
// valid config is, its defaults, and what auto-partitioning means for it.

// MaxPartitions bounds a topic's partition count.
const MaxPartitions = 10000

// AutoPartitioned reports whether cfg has auto-partitioning enabled
// ('scale_up' or 'paused'); its partitions are then keyed.
func AutoPartitioned(cfg *TopicConfig) bool {
	switch cfg.AutoPartitioningStrategy {
	case "", "disabled":
		return false
	}
	return true
}

// NormalizeConfig validates cfg and fills the partition count default.
func NormalizeConfig(cfg *TopicConfig) error {
	if cfg.Name == "" {
		return errors.New("topic name is empty")
	}
	if cfg.MinActivePartitions == 0 {
		cfg.MinActivePartitions = 1
	}
	if cfg.MinActivePartitions < 0 || cfg.MinActivePartitions > MaxPartitions {
		return fmt.Errorf("min_active_partitions must be between 1 and %d, got %d", MaxPartitions, cfg.MinActivePartitions)
	}
	if cfg.MaxActivePartitions != 0 && cfg.MaxActivePartitions < cfg.MinActivePartitions {
		return fmt.Errorf("max_active_partitions (%d) is less than min_active_partitions (%d)",
			cfg.MaxActivePartitions, cfg.MinActivePartitions)
	}
	if AutoPartitioned(cfg) && cfg.RetentionStorageMB > 0 {
		return fmt.Errorf("%w: auto_partitioning_strategy %q cannot be combined with retention_storage_mb", ErrAutoPartitioning, cfg.AutoPartitioningStrategy)
	}
	for _, c := range cfg.SupportedCodecs {
		if !c.Valid() {
			return fmt.Errorf("unknown codec %d in supported_codecs", uint8(c))
		}
	}
	if len(cfg.Consumers) > MaxConsumersPerTopic {
		return fmt.Errorf("a topic has at most %d consumers", MaxConsumersPerTopic)
	}
	seen := map[string]bool{}
	for _, c := range cfg.Consumers {
		if c.Name == "" {
			return errors.New("consumer name is empty")
		}
		if seen[c.Name] {
			return fmt.Errorf("%w: %q", ErrConsumerExists, c.Name)
		}
		seen[c.Name] = true
	}
	return nil
}

// CloneConfig deep-copies the slices of cfg.
func CloneConfig(cfg TopicConfig) TopicConfig {
	cfg.SupportedCodecs = slices.Clone(cfg.SupportedCodecs)
	cfg.Consumers = slices.Clone(cfg.Consumers)
	for i := range cfg.Consumers {
		cfg.Consumers[i].SupportedCodecs = slices.Clone(cfg.Consumers[i].SupportedCodecs)
		cfg.Consumers[i].ACL = cloneACL(cfg.Consumers[i].ACL)
	}
	cfg.ACL = cloneACL(cfg.ACL)
	cfg.ColumnACLs = cloneColumnACLs(cfg.ColumnACLs)
	return cfg
}

// RetentionEvery is how often a store applies retention: every base, or
// every half of the shortest retention_period of cfgs when that is
// shorter (so data is gone within about one and a half periods of its
// expiry), never more often than every second.
func RetentionEvery(base time.Duration, cfgs []TopicConfig) time.Duration {
	every := base
	for i := range cfgs {
		if p := cfgs[i].RetentionPeriod; p > 0 && p/2 < every {
			every = p / 2
		}
	}
	return max(every, time.Second)
}

// StabilizationWindow is cfg's window, or YDB's default of 5 minutes.
func StabilizationWindow(cfg *TopicConfig) time.Duration {
	if cfg.AutoPartitioningWindow > 0 {
		return cfg.AutoPartitioningWindow
	}
	return DefaultStabilizationWindow
}

// SplitThreshold is the rate (bytes/s) above which a partition of cfg is
// overloaded.
func SplitThreshold(cfg *TopicConfig) float64 {
	speed := cfg.PartitionWriteSpeedBytes
	if speed <= 0 {
		speed = DefaultWriteSpeedBytesPerSec
	}
	pct := cfg.AutoPartitioningUpPercent
	if pct <= 0 {
		pct = DefaultUpUtilizationPercent
	}
	return float64(speed) * float64(pct) / 100
}

// ProducerExpiry is how long cfg's producers live without writes: its
// producer_inactivity_period, else def (the store's default).
func ProducerExpiry(cfg *TopicConfig, def time.Duration) time.Duration {
	if cfg.ProducerExpiry > 0 {
		return cfg.ProducerExpiry
	}
	return def
}
