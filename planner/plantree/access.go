package plantree

// Access is one thing a planned statement does to a topic, for the
// privilege check before it runs: read its messages (SELECT), write them
// (INSERT), or act as one of its consumers (read as it, acknowledge for
// it: USAGE on the consumer).
type Access struct {
	Topic    string
	Consumer string // "" unless the statement acts as a consumer
	Read     bool
	Insert   bool
	// ReadCols and InsertCols are the columns read and written (bit i:
	// MsgCol i), for a role whose privileges are on columns only: it
	// needs them on every column named, or, naming none (count(*)), on
	// some column.
	ReadCols, InsertCols uint64
}

// Accesses lists what p does to topics, each (topic, consumer) once, in
// the order first met. Statements whose objects are only known as they
// run (UPDATE sys.consumers) and DDL are checked where they run.
func Accesses(p Plan) []Access {
	var a accessList
	a.plan(p)
	return a
}

type accessList []Access

func (a *accessList) add(x Access) {
	for i := range *a {
		y := &(*a)[i]
		if y.Topic == x.Topic && y.Consumer == x.Consumer {
			y.Read = y.Read || x.Read
			y.Insert = y.Insert || x.Insert
			y.ReadCols |= x.ReadCols
			y.InsertCols |= x.InsertCols
			return
		}
	}
	*a = append(*a, x)
}

func (a *accessList) plan(p Plan) {
	switch x := p.(type) {
	case *SelectPlan:
		a.query(x)
	case *InsertPlan:
		a.add(Access{Topic: x.Topic, Insert: true, InsertCols: colBits(x.Cols)})
		a.query(x.Select)
	case *CopyPlan:
		a.add(Access{Topic: x.Topic, Insert: true, InsertCols: colBits(x.Cols)})
	case *CopyOutPlan:
		a.query(x.Select)
	case *DeclareCursorPlan:
		a.query(x.Query)
	case *ExplainPlan:
		// As PostgreSQL: explaining a statement needs what running it
		// needs, so a plan cannot reveal what its role may not read.
		a.plan(x.Inner)
	case *SharedActionPlan:
		a.add(Access{Topic: x.Topic, Consumer: x.Consumer})
	}
}

// query adds what a query block and every block it reads (inputs,
// subqueries) read.
func (a *accessList) query(p *SelectPlan) {
	if p == nil {
		return
	}
	switch {
	case p.Consumer != nil:
		a.add(Access{Topic: p.Consumer.Topic, Read: true, ReadCols: p.Scan.Used})
		a.add(Access{Topic: p.Consumer.Topic, Consumer: p.Consumer.Consumer})
	case p.Scan != nil:
		a.add(Access{Topic: p.Scan.Topic, Read: true, ReadCols: p.Scan.Used})
	}
	for _, in := range blockInputs(p) {
		a.query(in)
	}
	subs := allSubqueries(p)
	for _, sq := range subs {
		a.query(sq.Plan)
	}
}

// colBits is the set of cols (bit i: MsgCol i).
func colBits(cols []MsgCol) uint64 {
	var b uint64
	for _, c := range cols {
		b |= 1 << uint(c)
	}
	return b
}
