package sysview

import "sync/atomic"

// KafkaGroup is one Kafka consumer group of this gateway, as the Kafka
// door reports it (package kafka's GroupView, copied by the process that
// runs both doors, so this package does not import the door).
type KafkaGroup struct {
	Group, State, ProtocolType, Protocol, Leader string
	Generation                                   int64
	Members                                      []KafkaMember
}

// KafkaMember is one member of a KafkaGroup. Assigned is its assignment
// decoded, partitions by topic (nil unless the group speaks Kafka's
// consumer protocol).
type KafkaMember struct {
	ID, InstanceID, ClientID, ClientHost, Assignment string
	Assigned                                         map[string][]int32
}

// kafkaGroups lists the Kafka door's groups; nil (no door) shows none.
type kafkaGroups = atomic.Pointer[func() []KafkaGroup]

// kafkaSessions lists the Kafka door's connections; nil shows none.
type kafkaSessions = atomic.Pointer[func() []SessionView]

// SetKafkaSessions makes sys.sessions list what conns returns besides
// this process's PostgreSQL sessions: the Kafka door's connections
// (SessionView.Protocol "kafka"), when the process runs one. They are
// this gateway's answer to the others' questions too.
func (v *Views) SetKafkaSessions(conns func() []SessionView) { v.kafkaConns.Store(&conns) }

// SetKafkaGroups makes sys.kafka_groups list what groups returns: the
// Kafka door's groups, when the process runs one.
func (v *Views) SetKafkaGroups(groups func() []KafkaGroup) { v.kafka.Store(&groups) }

// kafkaGroupRows builds sys.kafka_groups: a row per member, one with NULL
// member columns for a group without members.
func (v *Views) kafkaGroupRows() [][]any {
	f := v.kafka.Load()
	if f == nil {
		return nil
	}
	var rows [][]any
	for _, g := range (*f)() {
		head := []any{g.Group, g.State, nullText(g.ProtocolType), nullText(g.Protocol), g.Generation, nullText(g.Leader)}
		if len(g.Members) == 0 {
			rows = append(rows, append(head, nil, nil, nil, nil, nil))
			continue
		}
		for _, m := range g.Members {
			r := append(append([]any(nil), head...), m.ID, nullText(m.InstanceID), m.ClientID, m.ClientHost, nullText(m.Assignment))
			rows = append(rows, r)
		}
	}
	return rows
}

// kafkaMembers maps the partitions the Kafka door's group members are
// assigned (the group being the consumer) to the members, for
// sys.consumers.kafka_member: this gateway's members, as
// sys.kafka_groups shows them.
func (v *Views) kafkaMembers() map[heldKey]string {
	f := v.kafka.Load()
	if f == nil {
		return nil
	}
	m := map[heldKey]string{}
	for _, g := range (*f)() {
		for _, mb := range g.Members { // by id: the first claim stays
			for t, ps := range mb.Assigned {
				for _, p := range ps {
					k := heldKey{t, g.Group, p}
					if _, ok := m[k]; !ok {
						m[k] = mb.ID
					}
				}
			}
		}
	}
	return m
}
