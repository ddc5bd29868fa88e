package topicopts

import (
	"strings"
	"time"

	"topicgate/sql"
	"topicgate/sql/pgerror"
	"topicgate/topicstore"
)

// ValidateTopicName checks a topic path such as orders/eu.
func ValidateTopicName(name string) error {
	bad := func(why string) error {
		return pgerror.Newf(pgerror.CodeInvalidParameterValue, "invalid topic name \"%s\": %s", name, why)
	}
	switch {
	case name == "":
		return bad("empty")
	case len(name) > 255:
		return bad("longer than 255 bytes")
	case strings.HasPrefix(name, "/") || strings.HasSuffix(name, "/") || strings.Contains(name, "//"):
		return bad("path segments must not be empty")
	case strings.ContainsAny(name, "\x00\n\r\t"):
		return bad("control characters are not allowed")
	}
	return nil
}

// NewTopic is the configuration CREATE TOPIC describes: its name checked,
// its options and its consumers' applied to the defaults.
func NewTopic(s *sql.CreateTopic) (topicstore.TopicConfig, error) {
	if err := ValidateTopicName(s.Name); err != nil {
		return topicstore.TopicConfig{}, err
	}
	cfg := topicstore.TopicConfig{Name: s.Name, MinActivePartitions: 1}
	if err := applyTopicOptions(&cfg, s.Options); err != nil {
		return topicstore.TopicConfig{}, err
	}
	for _, cd := range s.Consumers {
		if err := addConsumer(&cfg, cd); err != nil {
			return topicstore.TopicConfig{}, err
		}
	}
	return cfg, nil
}

func addConsumer(cfg *topicstore.TopicConfig, cd sql.ConsumerDef) error {
	for _, c := range cfg.Consumers {
		if c.Name == cd.Name {
			return pgerror.Newf(pgerror.CodeDuplicateObject, "consumer \"%s\" already exists in topic \"%s\"", cd.Name, cfg.Name)
		}
	}
	if len(cfg.Consumers) >= topicstore.MaxConsumersPerTopic {
		return pgerror.Newf(pgerror.CodeProgramLimitExceeded, "topic \"%s\" already has %d consumers, the maximum", cfg.Name, topicstore.MaxConsumersPerTopic)
	}
	if cd.Name == "" {
		return pgerror.New(pgerror.CodeInvalidParameterValue, "consumer name must not be empty")
	}
	c := topicstore.ConsumerConfig{Name: cd.Name}
	if err := applyConsumerOptions(&c, cd.Options); err != nil {
		return err
	}
	cfg.Consumers = append(cfg.Consumers, c)
	return nil
}

func findConsumer(cfg *topicstore.TopicConfig, name string) (int, error) {
	for i, c := range cfg.Consumers {
		if c.Name == name {
			return i, nil
		}
	}
	return -1, pgerror.Newf(pgerror.CodeUndefinedObject, "consumer \"%s\" does not exist in topic \"%s\"", name, cfg.Name)
}

// Alter is what ALTER TOPIC's actions (all but SPLIT PARTITION, which is
// no option) do to a topic's configuration: a function that edits a copy
// of it, checking each action against the configuration as the ones
// before it left it.
func Alter(actions []sql.AlterAction) func(*topicstore.TopicConfig) error {
	return func(cfg *topicstore.TopicConfig) error {
		for _, a := range actions {
			switch x := a.(type) {
			case *sql.AddConsumer:
				if err := addConsumer(cfg, x.Consumer); err != nil {
					return err
				}
			case *sql.DropConsumer:
				i, err := findConsumer(cfg, x.Name)
				if err != nil {
					return err
				}
				cfg.Consumers = append(cfg.Consumers[:i:i], cfg.Consumers[i+1:]...)
			case *sql.AlterConsumer:
				i, err := findConsumer(cfg, x.Name)
				if err != nil {
					return err
				}
				c := cfg.Consumers[i]
				for _, n := range x.Reset {
					if err := resetConsumerOption(&c, n); err != nil {
						return err
					}
				}
				if err := applyConsumerOptions(&c, x.Set); err != nil {
					return err
				}
				if err := validateConsumer(&c, nil); err != nil {
					return err
				}
				cfg.Consumers = append(cfg.Consumers[:i:i], append([]topicstore.ConsumerConfig{c}, cfg.Consumers[i+1:]...)...)
			case *sql.SetOptions:
				before := cfg.MinActivePartitions
				if err := applyTopicOptions(cfg, x.Options); err != nil {
					return err
				}
				if cfg.MinActivePartitions < before {
					return pgerror.Newf(pgerror.CodeInvalidParameterValue, "min_active_partitions cannot decrease from %d to %d: partitions are never removed", before, cfg.MinActivePartitions)
				}
			case *sql.ResetOptions:
				if err := resetTopicOptions(cfg, x.Names); err != nil {
					return err
				}
			default:
				return pgerror.AssertionFailed("unknown ALTER TOPIC action %T", a)
			}
		}
		return nil
	}
}

func resetConsumerOption(c *topicstore.ConsumerConfig, name string) error {
	switch name {
	case "important":
		c.Important = false
	case "read_from":
		c.ReadFrom = time.Time{}
	case "supported_codecs":
		c.SupportedCodecs = nil
	case "availability_period":
		c.AvailabilityPeriod = 0
	case "default_processing_timeout":
		c.ProcessingTimeout = 0
	case "max_processing_attempts":
		c.MaxProcessingAttempts = 0
	case "dead_letter_policy":
		c.DeadLetterPolicy = ""
		c.DeadLetterQueue = ""
	case "dead_letter_queue":
		c.DeadLetterQueue = ""
	case "keep_messages_order":
		c.KeepMessagesOrder = false
	case "receive_message_delay":
		c.ReceiveMessageDelay = 0
	case "type":
		return BadOption("consumer option \"type\" cannot be reset")
	default:
		return BadOption("unrecognized consumer option \"%s\"", name)
	}
	return nil
}
