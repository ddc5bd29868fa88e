package chain

import "context"

// Settle settles the doubts whose requests were answered
// ErrOutcomeUnknown and that the fold has decided since: the stagings of
// a stored batch are committed, those of a batch never stored are
// deleted, those of a lost one left to the sweep. With resolve it first
// resolves those still undecided (the committer does, when its own
// batches are not using the chain). Any goroutine may call it.
func (c *Chain) Settle(ctx context.Context, resolve bool) {
	if resolve {
		c.h.Lock()
		var open []*Doubt
		for _, d := range c.Doubts {
			if d.Answered && !d.Decided() {
				open = append(open, d)
			}
		}
		c.h.Unlock()
		for _, d := range open {
			_, _, _ = c.resolve(d, c.h.Now().Add(c.cfg.Timeout))
		}
	}
	var committed, purge, lost []uint64
	c.h.Lock()
	var keep []*Doubt
	for _, d := range c.Doubts {
		if !d.Answered || !d.Decided() {
			keep = append(keep, d)
			continue
		}
		c.Decided++
		switch {
		case d.At != 0:
			committed = append(committed, d.Txns...)
		case d.Dead:
			purge = append(purge, d.Txns...)
		default:
			c.cfg.Logger.Warn("a batch's outcome is lost: this gateway's fold missed what followed it on its chain (purged by another gateway's sweep while this one was away); its stagings are left to the sweep",
				"gateway", c.cfg.Gateway, "batch", d.ID, "stagings", len(d.Txns))
			lost = append(lost, d.Txns...)
		}
	}
	c.Doubts = keep
	c.h.Unlock()
	c.h.SettleStagings(committed, true)
	c.h.SettleStagings(lost, true)
	c.h.SettleStagings(purge, false)
}

// Answered reports whether a batch answered ErrOutcomeUnknown is not
// settled yet.
func (c *Chain) Answered() bool {
	c.h.Lock()
	defer c.h.Unlock()
	for _, d := range c.Doubts {
		if d.Answered {
			return true
		}
	}
	return false
}

// Purge deletes this gateway's chain below its last link as folded, or
// below the predecessor of its oldest batch not settled yet (whose
// outcome the link after that predecessor decides), when that moved on.
func (c *Chain) Purge(ctx context.Context) {
	c.h.Lock()
	below := c.cfg.Fold.ChainLast(c.cfg.Gateway)
	for _, d := range c.Doubts {
		below = min(below, d.Prev)
	}
	due := below > c.Purged
	c.h.Unlock()
	if !due {
		return
	}
	rctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	if err := c.h.Purge(rctx, c.cfg.Subjects.Chain(c.cfg.Gateway), below); err == nil {
		c.h.Lock()
		c.Purged = max(c.Purged, below)
		c.h.Unlock()
	}
}
