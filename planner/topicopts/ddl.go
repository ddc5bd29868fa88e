package topicopts

import (
	"strconv"
	"strings"
	"time"

	"topicgate/sql"
	"topicgate/topicstore"
)

// CreateTopicDDL is the CREATE TOPIC statement that recreates cfg (SHOW
// CREATE TOPIC): the inverse of applyTopicOptions and
// applyConsumerOptions, option by option, listing only the options that
// differ from their defaults, in the order the parsers name them.
// Partitions added by auto-partitioning are not options: the statement
// creates min_active_partitions of them.
func CreateTopicDDL(cfg topicstore.TopicConfig) string {
	var b strings.Builder
	b.WriteString("CREATE TOPIC ")
	b.WriteString(ddlIdent(cfg.Name))
	if len(cfg.Consumers) > 0 {
		b.WriteString(" (")
		for i, c := range cfg.Consumers {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("CONSUMER ")
			b.WriteString(ddlIdent(c.Name))
			if opts := consumerOptions(c); len(opts) > 0 {
				b.WriteString(" WITH (")
				b.WriteString(strings.Join(opts, ", "))
				b.WriteString(")")
			}
		}
		b.WriteString(")")
	}
	if opts := topicOptions(cfg); len(opts) > 0 {
		b.WriteString(" WITH (")
		b.WriteString(strings.Join(opts, ", "))
		b.WriteString(")")
	}
	return b.String()
}

func topicOptions(cfg topicstore.TopicConfig) []string {
	var out []string
	add := func(name, value string) { out = append(out, name+" = "+value) }
	add("min_active_partitions", strconv.Itoa(cfg.MinActivePartitions))
	if cfg.MaxActivePartitions > 0 {
		add("max_active_partitions", strconv.Itoa(cfg.MaxActivePartitions))
	}
	if cfg.RetentionPeriod > 0 {
		add("retention_period", ddlInterval(cfg.RetentionPeriod))
	}
	if cfg.RetentionStorageMB > 0 {
		add("retention_storage_mb", strconv.FormatInt(cfg.RetentionStorageMB, 10))
	}
	if len(cfg.SupportedCodecs) > 0 {
		add("supported_codecs", ddlCodecs(cfg.SupportedCodecs))
	}
	if cfg.PartitionWriteSpeedBytes > 0 {
		add("partition_write_speed_bytes_per_second", strconv.FormatInt(cfg.PartitionWriteSpeedBytes, 10))
	}
	if cfg.PartitionWriteBurstBytes > 0 {
		add("partition_write_burst_bytes", strconv.FormatInt(cfg.PartitionWriteBurstBytes, 10))
	}
	if cfg.MeteringMode != "" {
		add("metering_mode", ddlString(cfg.MeteringMode))
	}
	if cfg.AutoPartitioningStrategy != "" {
		add("auto_partitioning_strategy", ddlString(cfg.AutoPartitioningStrategy))
	}
	if cfg.AutoPartitioningUpPercent > 0 {
		add("auto_partitioning_up_utilization_percent", strconv.Itoa(cfg.AutoPartitioningUpPercent))
	}
	if cfg.AutoPartitioningDownPercent > 0 {
		add("auto_partitioning_down_utilization_percent", strconv.Itoa(cfg.AutoPartitioningDownPercent))
	}
	if cfg.AutoPartitioningWindow > 0 {
		add("auto_partitioning_stabilization_window", ddlInterval(cfg.AutoPartitioningWindow))
	}
	if cfg.ProducerExpiry > 0 {
		add("producer_inactivity_period", ddlInterval(cfg.ProducerExpiry))
	}
	return out
}

func consumerOptions(c topicstore.ConsumerConfig) []string {
	var out []string
	add := func(name, value string) { out = append(out, name+" = "+value) }
	if c.Shared {
		add("type", "'shared'")
	}
	if c.Important {
		add("important", "true")
	}
	if !c.ReadFrom.IsZero() {
		add("read_from", "Datetime("+ddlString(c.ReadFrom.UTC().Format(time.RFC3339Nano))+")")
	}
	if len(c.SupportedCodecs) > 0 {
		add("supported_codecs", ddlCodecs(c.SupportedCodecs))
	}
	if c.AvailabilityPeriod > 0 {
		add("availability_period", ddlInterval(c.AvailabilityPeriod))
	}
	if c.ProcessingTimeout > 0 {
		add("default_processing_timeout", ddlInterval(c.ProcessingTimeout))
	}
	if c.MaxProcessingAttempts > 0 {
		add("max_processing_attempts", strconv.Itoa(c.MaxProcessingAttempts))
	}
	if c.DeadLetterPolicy != "" {
		add("dead_letter_policy", ddlString(c.DeadLetterPolicy))
	}
	if c.DeadLetterQueue != "" {
		add("dead_letter_queue", ddlString(c.DeadLetterQueue))
	}
	if c.KeepMessagesOrder {
		add("keep_messages_order", "true")
	}
	if c.ReceiveMessageDelay > 0 {
		add("receive_message_delay", ddlInterval(c.ReceiveMessageDelay))
	}
	return out
}

// ddlInterval writes d as YQL's Interval('P...'), ISO 8601: days, then
// hours, minutes and seconds (with a fraction when it has one).
func ddlInterval(d time.Duration) string {
	var b strings.Builder
	b.WriteString("Interval('P")
	if days := d / (24 * time.Hour); days > 0 {
		b.WriteString(strconv.FormatInt(int64(days), 10) + "D")
		d -= days * 24 * time.Hour
	}
	if d > 0 {
		b.WriteString("T")
		if h := d / time.Hour; h > 0 {
			b.WriteString(strconv.FormatInt(int64(h), 10) + "H")
			d -= h * time.Hour
		}
		if m := d / time.Minute; m > 0 {
			b.WriteString(strconv.FormatInt(int64(m), 10) + "M")
			d -= m * time.Minute
		}
		if d > 0 {
			b.WriteString(strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "S")
		}
	}
	if b.Len() == len("Interval('P") {
		b.WriteString("T0S")
	}
	b.WriteString("')")
	return b.String()
}

func ddlCodecs(cs []topicstore.Codec) string {
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.String()
	}
	return ddlString(strings.Join(names, ","))
}

// ddlIdent writes a topic or consumer name as the DDL parser reads it
// back: bare when it is a lower-case identifier and not a word of the
// statement, else double-quoted.
func ddlIdent(s string) string {
	return sql.QuoteIdentIfNeeded(s, func(w string) bool { return ddlWords[w] })
}

// ddlWords are the words of topic DDL a bare name must not be.
var ddlWords = map[string]bool{"consumer": true, "with": true, "topic": true, "create": true, "alter": true,
	"drop": true, "add": true, "set": true, "reset": true, "if": true, "not": true, "exists": true}

// ddlString writes s as a standard SQL string literal.
func ddlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// TopicReloptions are what pg_class.reloptions shows of a topic, as
// "key=value" (psql's \d+ prints them as its Options footer): its
// partitions (active of all), the options that differ from their
// defaults, and each consumer with its type.
func TopicReloptions(ti topicstore.TopicInfo) []string {
	active := 0
	for _, p := range ti.Partitions {
		if p.Active {
			active++
		}
	}
	out := []string{"partitions=" + strconv.Itoa(active) + " active of " + strconv.Itoa(len(ti.Partitions))}
	for _, o := range topicOptions(ti.Config) {
		name, value, _ := strings.Cut(o, " = ")
		out = append(out, name+"="+reloptionValue(value))
	}
	for _, c := range ti.Config.Consumers {
		typ := "streaming"
		if c.Shared {
			typ = "shared"
		}
		out = append(out, "consumer "+c.Name+"="+typ)
	}
	return out
}

// reloptionValue strips a DDL value's quoting: Interval('P1D') is P1D,
// 'raw,zstd' is raw,zstd.
func reloptionValue(v string) string {
	for _, w := range []string{"Interval(", "Datetime("} {
		if strings.HasPrefix(v, w) && strings.HasSuffix(v, ")") {
			v = v[len(w) : len(v)-1]
		}
	}
	if len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'' {
		v = strings.ReplaceAll(v[1:len(v)-1], "''", "'")
	}
	return v
}
