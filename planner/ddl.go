package planner

import (
	"topicgate/planner/plantree"
	"topicgate/planner/topicopts"
	"topicgate/sql"
	"topicgate/sql/pgerror"
)

func planCreateTopic(s *sql.CreateTopic) (plantree.Plan, error) {
	cfg, err := topicopts.NewTopic(s)
	if err != nil {
		return nil, err
	}
	return &plantree.CreateTopicPlan{Config: cfg, IfNotExists: s.IfNotExists}, nil
}

func planAlterTopic(s *sql.AlterTopic) (plantree.Plan, error) {
	actions := s.Actions
	for _, a := range actions {
		if sp, ok := a.(*sql.SplitPartition); ok {
			if len(actions) > 1 {
				return nil, pgerror.New(pgerror.CodeFeatureNotSupported, "SPLIT PARTITION must be the only action of its ALTER TOPIC")
			}
			return &plantree.AlterTopicPlan{Name: s.Name, IfExists: s.IfExists, Split: sp.Partition}, nil
		}
	}
	return &plantree.AlterTopicPlan{Name: s.Name, IfExists: s.IfExists, Apply: topicopts.Alter(actions), Split: -1}, nil
}
