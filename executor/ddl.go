package executor

import (
	"context"
	"errors"

	"topicgate/planner/plantree"
	"topicgate/sql/pgerror"
	"topicgate/topicstore"
	"topicgate/txn"
	"topicgate/wire"
)

func (s *Session) noDDLInTxn(what string) error {
	if s.txc.Block() != nil {
		return pgerror.Newf(pgerror.CodeActiveSQLTransaction, "%s cannot run inside a transaction block", what)
	}
	return nil
}

func (s *Session) execCreateTopic(ctx context.Context, p *plantree.CreateTopicPlan, out wire.Output) error {
	if err := s.noDDLInTxn("CREATE TOPIC"); err != nil {
		return err
	}
	// The plan is kept for the next execution: the owner and the grants
	// go on a copy.
	cfg := topicstore.CloneConfig(p.Config)
	if err := s.eng.authz.PrepareCreate(ctx, s.id, &cfg); err != nil {
		return err
	}
	err := s.eng.store.CreateTopic(ctx, cfg)
	if errors.Is(err, topicstore.ErrTopicExists) && p.IfNotExists {
		out.Notice(pgerror.CodeDuplicateTable, "topic \""+p.Config.Name+"\" already exists, skipping")
		return nil
	}
	if err != nil {
		return txn.StoreError(err, p.Config.Name)
	}
	s.noticeMissingDLQs(p.Config, out)
	noticeBurstOnly(out, p.Config)
	return nil
}

func (s *Session) execAlterTopic(ctx context.Context, p *plantree.AlterTopicPlan, out wire.Output) error {
	if err := s.noDDLInTxn("ALTER TOPIC"); err != nil {
		return err
	}
	if err := s.eng.authz.CheckOwner(ctx, s.id, p.Name); err != nil {
		return err
	}
	before, _ := s.eng.store.Topic(p.Name)
	var err error
	if p.Split >= 0 {
		err = s.eng.store.SplitPartition(ctx, p.Name, p.Split)
	} else {
		fix, perr := s.eng.authz.PrepareAlter(ctx, s.id, p.Name, p.Apply)
		if perr != nil {
			return perr
		}
		err = s.eng.store.AlterTopic(ctx, p.Name, func(cfg *topicstore.TopicConfig) error {
			old := topicstore.CloneConfig(*cfg)
			if err := p.Apply(cfg); err != nil {
				return err
			}
			fix(&old, cfg)
			return nil
		})
	}
	if errors.Is(err, topicstore.ErrTopicNotFound) && p.IfExists {
		out.Notice(pgerror.CodeUndefinedTable, "topic \""+p.Name+"\" does not exist, skipping")
		return nil
	}
	if err != nil {
		return txn.StoreError(err, p.Name)
	}
	if ti, err := s.eng.store.Topic(p.Name); err == nil {
		s.noticeMissingDLQs(ti.Config, out)
		if speedChanged(before.Config, ti.Config) {
			noticeBurstOnly(out, ti.Config)
		}
	}
	return nil
}

// noticeMissingDLQs warns, after a CREATE or ALTER TOPIC that succeeded,
// of each shared consumer of cfg whose dead_letter_queue names a topic
// that does not exist: the DDL stands (the queue may be created later),
// but until then every dead-letter move fails and the message stays in
// the queue (logged and counted in sys.consumers).
func (s *Session) noticeMissingDLQs(cfg topicstore.TopicConfig, out wire.Output) {
	for _, c := range cfg.Consumers {
		if c.DeadLetterQueue == "" || c.DeadLetterQueue == cfg.Name {
			continue
		}
		if _, err := s.eng.store.Topic(c.DeadLetterQueue); errors.Is(err, topicstore.ErrTopicNotFound) {
			out.Notice(pgerror.CodeUndefinedTable, "dead_letter_queue \""+c.DeadLetterQueue+"\" of consumer \""+c.Name+
				"\" does not exist: dead-letter moves of topic \""+cfg.Name+"\" fail, and the messages stay in the queue, until it is created")
		}
	}
}

func (s *Session) execDropTopic(ctx context.Context, p *plantree.DropTopicPlan, out wire.Output) error {
	if err := s.noDDLInTxn("DROP TOPIC"); err != nil {
		return err
	}
	// Check all names first so a failing DROP drops nothing.
	var drop []string
	for _, n := range p.Names {
		if _, err := s.eng.store.Topic(n); err != nil {
			if errors.Is(err, topicstore.ErrTopicNotFound) && p.IfExists {
				out.Notice(pgerror.CodeUndefinedTable, "topic \""+n+"\" does not exist, skipping")
				continue
			}
			return txn.StoreError(err, n)
		}
		if err := s.eng.authz.CheckOwner(ctx, s.id, n); err != nil {
			return err
		}
		drop = append(drop, n)
	}
	for _, n := range drop {
		if err := s.eng.store.DropTopic(ctx, n); err != nil {
			return txn.StoreError(err, n)
		}
	}
	return nil
}
