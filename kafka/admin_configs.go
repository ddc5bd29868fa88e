package kafka

import (
	"context"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"topicgate/topicstore"
)

// kconfig is one Kafka config entry as DescribeConfigs and CreateTopics
// (v5+) answer it.
type kconfig struct {
	name, value string
	source      kmsg.ConfigSource
	typ         kmsg.ConfigType
	doc         string
}

// topicKafkaConfigs are the Kafka topic configs a topic maps to cleanly:
// its retention period (retention.ms), its size retention per partition
// (retention.bytes, -1 when it has none), the store's message size limit
// (max.message.bytes), cleanup.policy (always delete: no compaction) and
// message.timestamp.type (CreateTime: a record's timestamp is its
// created_at).
func topicKafkaConfigs(cfg *topicstore.TopicConfig) []kconfig {
	ret := kconfig{name: "retention.ms", value: msString(topicstore.DefaultRetention), source: kmsg.ConfigSourceDefaultConfig,
		typ: kmsg.ConfigTypeLong, doc: "retention_period: messages older than this are deleted"}
	if cfg.RetentionPeriod > 0 {
		ret.value, ret.source = msString(cfg.RetentionPeriod), kmsg.ConfigSourceDynamicTopicConfig
	}
	bytes := kconfig{name: "retention.bytes", value: "-1", source: kmsg.ConfigSourceDefaultConfig,
		typ: kmsg.ConfigTypeLong, doc: "retention_storage_mb in bytes: each partition keeps at most this much"}
	if cfg.RetentionStorageMB > 0 {
		bytes.value, bytes.source = strconv.FormatInt(cfg.RetentionStorageMB<<20, 10), kmsg.ConfigSourceDynamicTopicConfig
	}
	return []kconfig{
		{name: "cleanup.policy", value: "delete", source: kmsg.ConfigSourceDefaultConfig, typ: kmsg.ConfigTypeList,
			doc: "topics delete old messages; there is no compaction"},
		{name: "max.message.bytes", value: strconv.Itoa(topicstore.MaxMessageSize), source: kmsg.ConfigSourceDefaultConfig,
			typ: kmsg.ConfigTypeInt, doc: "the store's limit on one record (key, value and headers)"},
		{name: "message.timestamp.type", value: "CreateTime", source: kmsg.ConfigSourceDefaultConfig, typ: kmsg.ConfigTypeString,
			doc: "a record's timestamp is its created_at"},
		bytes,
		ret,
	}
}

// brokerKafkaConfigs are broker 0's configs: what every gateway does
// whatever it is told.
func brokerKafkaConfigs() []kconfig {
	static := func(name, value string, typ kmsg.ConfigType, doc string) kconfig {
		return kconfig{name: name, value: value, source: kmsg.ConfigSourceStaticBrokerConfig, typ: typ, doc: doc}
	}
	return []kconfig{
		static("auto.create.topics.enable", "false", kmsg.ConfigTypeBoolean, "the door creates no topics on Metadata or Produce"),
		static("default.replication.factor", "1", kmsg.ConfigTypeInt, "one broker; the store replicates by itself"),
		static("log.cleanup.policy", "delete", kmsg.ConfigTypeList, "no compaction"),
		static("log.retention.ms", msString(topicstore.DefaultRetention), kmsg.ConfigTypeLong, "the default retention_period"),
		static("message.max.bytes", strconv.Itoa(topicstore.MaxMessageSize), kmsg.ConfigTypeInt, "the store's limit on one record"),
		static("num.partitions", "1", kmsg.ConfigTypeInt, "the default min_active_partitions"),
	}
}

func msString(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }

// describeConfigs answers DescribeConfigs, read-only: a topic's configs
// (SELECT on it, as Metadata's describe; TOPIC_AUTHORIZATION_FAILED
// otherwise) and broker 0's (a superuser's, CLUSTER_AUTHORIZATION_FAILED
// otherwise, as Kafka's DESCRIBE_CONFIGS on the cluster).
func (c *conn) describeConfigs(ctx context.Context, req *kmsg.DescribeConfigsRequest) kmsg.Response {
	c.barrier(ctx)
	resp := req.ResponseKind().(*kmsg.DescribeConfigsResponse)
	for _, rr := range req.Resources {
		r := kmsg.NewDescribeConfigsResponseResource()
		r.ResourceType, r.ResourceName = rr.ResourceType, rr.ResourceName
		var cfgs []kconfig
		var err error
		switch rr.ResourceType {
		case kmsg.ConfigResourceTypeTopic:
			cfgs, err = c.topicConfigs(ctx, rr.ResourceName)
		case kmsg.ConfigResourceTypeBroker:
			cfgs, err = c.brokerConfigs(rr.ResourceName)
		default:
			err = refuse(kerr.InvalidRequest, "config resource type %d is not described by the Kafka door (topics and broker 0 are)", rr.ResourceType)
		}
		r.ErrorCode, r.ErrorMessage = codeOf(err), messageOf(err)
		for _, kc := range filterConfigs(cfgs, rr.ConfigNames) {
			e := kmsg.NewDescribeConfigsResponseResourceConfig()
			e.Name, e.Value, e.ReadOnly = kc.name, kmsg.StringPtr(kc.value), true
			e.IsDefault = kc.source == kmsg.ConfigSourceDefaultConfig || kc.source == kmsg.ConfigSourceStaticBrokerConfig
			e.Source, e.ConfigType = kc.source, kc.typ
			if req.IncludeDocumentation {
				e.Documentation = kmsg.StringPtr(kc.doc)
			}
			r.Configs = append(r.Configs, e)
		}
		resp.Resources = append(resp.Resources, r)
	}
	return resp
}

// topicConfigs are the configs of topic name, if the connection may read
// it.
func (c *conn) topicConfigs(ctx context.Context, name string) ([]kconfig, error) {
	info, err := c.s.cfg.Store.Topic(name)
	if err == nil {
		err = c.authorize(ctx, name, false)
	}
	if err != nil {
		return nil, err
	}
	return topicKafkaConfigs(&info.Config), nil
}

// brokerConfigs are broker 0's configs ("" is the cluster default, the
// same), for a superuser.
func (c *conn) brokerConfigs(name string) ([]kconfig, error) {
	if name != "" && name != strconv.Itoa(brokerID) {
		return nil, refuse(kerr.InvalidRequest, "broker %q is not in this cluster: its only broker is %d", name, brokerID)
	}
	if err := c.clusterAuthorized(); err != nil {
		return nil, err
	}
	return brokerKafkaConfigs(), nil
}

// clusterAuthorized allows a superuser (or any connection without an
// Authority) what Kafka allows on the cluster resource.
func (c *conn) clusterAuthorized() error {
	if a := c.s.cfg.Auth; a != nil && !a.Superuser(c.id) {
		return refuse(kerr.ClusterAuthorizationFailed, "only a superuser may describe or change the cluster")
	}
	return nil
}

// filterConfigs keeps the configs named (all when names is nil); an
// unknown name is left out, as Kafka does.
func filterConfigs(cfgs []kconfig, names []string) []kconfig {
	if names == nil {
		return cfgs
	}
	var out []kconfig
	for _, kc := range cfgs {
		for _, n := range names {
			if n == kc.name {
				out = append(out, kc)
				break
			}
		}
	}
	return out
}
