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

// KafkaMember is one member of a KafkaGroup.
type KafkaMember struct {
	ID, InstanceID, ClientID, ClientHost, Assignment string
}

// kafkaGroups lists the Kafka door's groups; nil (no door) shows none.
type kafkaGroups = atomic.Pointer[func() []KafkaGroup]

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
