package topicopts

import (
	"fmt"
	"strings"
	"time"

	"topicgate/sql"
	"topicgate/sql/pgerror"
	"topicgate/sql/values"
	"topicgate/topicstore"
)

// BadOption is the error of an invalid option value (22023), for the
// options of topics, consumers and reads alike.
func BadOption(format string, args ...any) error {
	return pgerror.Newf(pgerror.CodeInvalidParameterValue, format, args...)
}

func optInt(o sql.Option, lo, hi int64) (int64, error) {
	if o.Value.Kind != sql.LitInt {
		return 0, BadOption("option \"%s\" must be an integer", o.Name)
	}
	if o.Value.Int < lo || o.Value.Int > hi {
		return 0, BadOption("option \"%s\" value %d is out of range [%d, %d]", o.Name, o.Value.Int, lo, hi)
	}
	return o.Value.Int, nil
}

func optBool(o sql.Option) (bool, error) {
	switch o.Value.Kind {
	case sql.LitBool:
		return o.Value.Bool, nil
	case sql.LitString, sql.LitIdent:
		if v, err := values.ParseText(o.Value.Str, values.TBool); err == nil {
			return v.(bool), nil
		}
	}
	return false, BadOption("option \"%s\" must be a boolean", o.Name)
}

func optDuration(o sql.Option, min time.Duration) (time.Duration, error) {
	var d time.Duration
	switch o.Value.Kind {
	case sql.LitInterval:
		d = o.Value.Dur
	case sql.LitString:
		v, err := values.ParseInterval(o.Value.Str)
		if err != nil {
			return 0, BadOption("option \"%s\" must be an interval such as Interval('PT30S'): %v", o.Name, err)
		}
		d = v
	default:
		return 0, BadOption("option \"%s\" must be an interval such as Interval('PT30S')", o.Name)
	}
	if d < min {
		return 0, BadOption("option \"%s\" must be at least %s", o.Name, values.FormatInterval(min))
	}
	return d, nil
}

func optTime(o sql.Option) (time.Time, error) {
	switch o.Value.Kind {
	case sql.LitTime:
		return o.Value.Time, nil
	case sql.LitString:
		t, err := values.ParseTimestamp(o.Value.Str)
		if err == nil {
			return t, nil
		}
	case sql.LitInt:
		return time.Unix(o.Value.Int, 0).UTC(), nil
	}
	return time.Time{}, BadOption("option \"%s\" must be a timestamp such as Datetime('2026-01-01T00:00:00Z')", o.Name)
}

func optString(o sql.Option, allowed ...string) (string, error) {
	if o.Value.Kind != sql.LitString && o.Value.Kind != sql.LitIdent {
		return "", BadOption("option \"%s\" must be a string", o.Name)
	}
	s := o.Value.Str
	if len(allowed) == 0 {
		return s, nil
	}
	for _, a := range allowed {
		if strings.EqualFold(s, a) {
			return a, nil
		}
	}
	return "", BadOption("option \"%s\" has invalid value '%s' (allowed: %s)", o.Name, s, strings.Join(allowed, ", "))
}

func optCodecs(o sql.Option) ([]topicstore.Codec, error) {
	s, err := optString(o)
	if err != nil {
		return nil, err
	}
	var out []topicstore.Codec
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		c, err := topicstore.ParseCodec(strings.ToLower(part))
		if err != nil {
			return nil, BadOption("option \"%s\": unknown codec \"%s\" (known: raw, gzip, lzop, zstd)", o.Name, part)
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, BadOption("option \"%s\" must list at least one codec", o.Name)
	}
	return out, nil
}

// CheckDuplicates refuses an option list that names an option twice
// (42601 at the second, as PostgreSQL says it of COPY's options).
func CheckDuplicates(opts []sql.Option) error {
	seen := map[string]bool{}
	for _, o := range opts {
		if seen[o.Name] {
			return pgerror.At(pgerror.New(pgerror.CodeSyntaxError, "conflicting or redundant options").
				WithDetail(fmt.Sprintf("Option \"%s\" is given more than once.", o.Name)), o.Pos)
		}
		seen[o.Name] = true
	}
	return nil
}

// applyTopicOptions validates opts and applies them to cfg.
func applyTopicOptions(cfg *topicstore.TopicConfig, opts []sql.Option) error {
	if err := CheckDuplicates(opts); err != nil {
		return err
	}
	for _, o := range opts {
		var err error
		var n int64
		switch o.Name {
		case "min_active_partitions":
			n, err = optInt(o, 1, 10000)
			cfg.MinActivePartitions = int(n)
		case "max_active_partitions", "partition_count_limit":
			n, err = optInt(o, 0, 10000)
			cfg.MaxActivePartitions = int(n)
		case "retention_period":
			cfg.RetentionPeriod, err = optDuration(o, time.Second)
		case "retention_storage_mb":
			cfg.RetentionStorageMB, err = optInt(o, 0, 1<<40)
		case "supported_codecs":
			cfg.SupportedCodecs, err = optCodecs(o)
		case "partition_write_speed_bytes_per_second":
			cfg.PartitionWriteSpeedBytes, err = optInt(o, 1, 1<<40)
		case "partition_write_burst_bytes":
			cfg.PartitionWriteBurstBytes, err = optInt(o, 0, 1<<40)
		case "metering_mode":
			cfg.MeteringMode, err = optString(o, "reserved_capacity", "request_units")
		case "auto_partitioning_strategy":
			cfg.AutoPartitioningStrategy, err = optString(o, "disabled", "scale_up", "scale_up_and_down", "paused")
			if err == nil && cfg.AutoPartitioningStrategy == "scale_up_and_down" {
				// YDB names it but merges no partitions either.
				err = pgerror.New(pgerror.CodeFeatureNotSupported,
					"auto_partitioning_strategy 'scale_up_and_down' is not supported: partitions split but never merge; use 'scale_up'")
			}
		case "auto_partitioning_up_utilization_percent":
			n, err = optInt(o, 1, 100)
			cfg.AutoPartitioningUpPercent = int(n)
		case "auto_partitioning_down_utilization_percent":
			n, err = optInt(o, 1, 100)
			cfg.AutoPartitioningDownPercent = int(n)
		case "auto_partitioning_stabilization_window":
			cfg.AutoPartitioningWindow, err = optDuration(o, time.Second)
		case "producer_inactivity_period":
			cfg.ProducerExpiry, err = optDuration(o, time.Second)
		default:
			return BadOption("unrecognized topic option \"%s\"", o.Name)
		}
		if err != nil {
			return err
		}
	}
	if cfg.MaxActivePartitions > 0 && cfg.MinActivePartitions > cfg.MaxActivePartitions {
		return BadOption("min_active_partitions (%d) exceeds max_active_partitions (%d)", cfg.MinActivePartitions, cfg.MaxActivePartitions)
	}
	return nil
}

// resetTopicOptions restores the named options to their defaults.
func resetTopicOptions(cfg *topicstore.TopicConfig, names []string) error {
	for _, n := range names {
		switch n {
		case "max_active_partitions", "partition_count_limit":
			cfg.MaxActivePartitions = 0
		case "retention_period":
			cfg.RetentionPeriod = 0
		case "retention_storage_mb":
			cfg.RetentionStorageMB = 0
		case "supported_codecs":
			cfg.SupportedCodecs = nil
		case "partition_write_speed_bytes_per_second":
			cfg.PartitionWriteSpeedBytes = 0
		case "partition_write_burst_bytes":
			cfg.PartitionWriteBurstBytes = 0
		case "metering_mode":
			cfg.MeteringMode = ""
		case "auto_partitioning_strategy":
			cfg.AutoPartitioningStrategy = ""
		case "auto_partitioning_up_utilization_percent":
			cfg.AutoPartitioningUpPercent = 0
		case "auto_partitioning_down_utilization_percent":
			cfg.AutoPartitioningDownPercent = 0
		case "auto_partitioning_stabilization_window":
			cfg.AutoPartitioningWindow = 0
		case "producer_inactivity_period":
			cfg.ProducerExpiry = 0
		case "min_active_partitions":
			return BadOption("option \"min_active_partitions\" cannot be reset: partitions are never removed")
		default:
			return BadOption("unrecognized topic option \"%s\"", n)
		}
	}
	return nil
}

var sharedOnly = map[string]bool{
	"default_processing_timeout": true, "max_processing_attempts": true, "dead_letter_policy": true,
	"dead_letter_queue": true, "keep_messages_order": true, "receive_message_delay": true,
}

// applyConsumerOptions validates opts and applies them to c.
func applyConsumerOptions(c *topicstore.ConsumerConfig, opts []sql.Option) error {
	if err := CheckDuplicates(opts); err != nil {
		return err
	}
	for _, o := range opts {
		var err error
		var n int64
		switch o.Name {
		case "type":
			var t string
			t, err = optString(o, "streaming", "shared")
			c.Shared = t == "shared"
		case "important":
			c.Important, err = optBool(o)
		case "read_from":
			c.ReadFrom, err = optTime(o)
		case "supported_codecs":
			c.SupportedCodecs, err = optCodecs(o)
		case "availability_period":
			c.AvailabilityPeriod, err = optDuration(o, 0)
		case "default_processing_timeout":
			c.ProcessingTimeout, err = optDuration(o, time.Second)
		case "max_processing_attempts":
			n, err = optInt(o, 0, 1000)
			c.MaxProcessingAttempts = int(n)
		case "dead_letter_policy":
			c.DeadLetterPolicy, err = optString(o, "none", "delete", "move")
		case "dead_letter_queue":
			c.DeadLetterQueue, err = optString(o)
		case "keep_messages_order":
			c.KeepMessagesOrder, err = optBool(o)
		case "receive_message_delay":
			c.ReceiveMessageDelay, err = optDuration(o, 0)
		default:
			return BadOption("unrecognized consumer option \"%s\"", o.Name)
		}
		if err != nil {
			return err
		}
	}
	return validateConsumer(c, opts)
}

// validateConsumer checks option combinations.
func validateConsumer(c *topicstore.ConsumerConfig, opts []sql.Option) error {
	if c.Important && c.AvailabilityPeriod > 0 {
		return BadOption("consumer \"%s\": important and availability_period cannot be combined", c.Name)
	}
	if !c.Shared {
		for _, o := range opts {
			if sharedOnly[o.Name] {
				return BadOption("option \"%s\" is only valid for a shared consumer (type = 'shared'); consumer \"%s\" is streaming", o.Name, c.Name)
			}
		}
	}
	if c.DeadLetterQueue != "" && c.DeadLetterPolicy != "move" {
		return BadOption("consumer \"%s\": dead_letter_queue requires dead_letter_policy = 'move'", c.Name)
	}
	if c.DeadLetterPolicy == "move" && c.DeadLetterQueue == "" {
		return BadOption("consumer \"%s\": dead_letter_policy 'move' requires dead_letter_queue", c.Name)
	}
	return nil
}
