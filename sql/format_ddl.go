package sql

import "fmt"

// Formatting of the topic DDL (Format).

// createTopic prints CREATE TOPIC with its consumers and options.
func (f *formatter) createTopic(x *CreateTopic) {
	f.w("CREATE TOPIC ")
	if x.IfNotExists {
		f.w("IF NOT EXISTS ")
	}
	f.w(ident(x.Name))
	if len(x.Consumers) > 0 {
		f.w(" (")
		for i, c := range x.Consumers {
			if i > 0 {
				f.w(", ")
			}
			f.consumer(c)
		}
		f.w(")")
	}
	if len(x.Options) > 0 {
		f.w(" WITH ")
		f.options(x.Options)
	}
}

// alterTopic prints ALTER TOPIC and its actions.
func (f *formatter) alterTopic(x *AlterTopic) {
	f.w("ALTER TOPIC ")
	if x.IfExists {
		f.w("IF EXISTS ")
	}
	f.w(ident(x.Name))
	for i, a := range x.Actions {
		f.w(map[bool]string{true: " ", false: ", "}[i == 0])
		f.alterAction(a)
	}
}

func (f *formatter) alterAction(a AlterAction) {
	switch x := a.(type) {
	case *AddConsumer:
		f.w("ADD ")
		f.consumer(x.Consumer)
	case *DropConsumer:
		f.w("DROP CONSUMER ", ident(x.Name))
	case *AlterConsumer:
		f.w("ALTER CONSUMER ", ident(x.Name))
		if x.Reset != nil {
			f.w(" RESET ")
			f.names(x.Reset)
		} else {
			f.w(" SET ")
			f.options(x.Set)
		}
	case *SetOptions:
		f.w("SET ")
		f.options(x.Options)
	case *ResetOptions:
		f.w("RESET ")
		f.names(x.Names)
	case *SplitPartition:
		f.w(fmt.Sprintf("SPLIT PARTITION %d", x.Partition))
	default:
		f.w(fmt.Sprintf("<%T>", a))
	}
}

// dropTopic prints DROP TOPIC.
func (f *formatter) dropTopic(x *DropTopic) {
	f.w("DROP TOPIC ")
	if x.IfExists {
		f.w("IF EXISTS ")
	}
	for i, n := range x.Names {
		if i > 0 {
			f.w(", ")
		}
		f.w(ident(n))
	}
}

func (f *formatter) consumer(c ConsumerDef) {
	f.w("CONSUMER ", ident(c.Name))
	if len(c.Options) > 0 {
		f.w(" WITH ")
		f.options(c.Options)
	}
}
