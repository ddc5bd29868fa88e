package sysview

import (
	"sort"

	"topicgate/acl"
	"topicgate/topicstore"
)

// ConsumerPrivilegeRows are sys.consumer_privileges' rows, as
// information_schema.table_privileges shows a table's grants: one per
// privilege of each entry of a consumer's access list, or of the default
// list (the owner's USAGE, granted by the owner) while it has none.
// owner names a topic's owner (a topic made before roles has none
// stored). A privilege is grantable with its grant option, or when the
// grantee has the owner's privileges, as information_schema has it. The view is filled by the executor, which knows the role
// document, and filtered there as the others are.
func ConsumerPrivilegeRows(topics []topicstore.TopicInfo, d *acl.Doc, owner func(*topicstore.TopicConfig) string) [][]any {
	topics = append([]topicstore.TopicInfo(nil), topics...)
	sort.Slice(topics, func(i, j int) bool { return topics[i].Config.Name < topics[j].Config.Name })
	var rows [][]any
	for i := range topics {
		cfg := &topics[i].Config
		own := owner(cfg)
		for _, c := range cfg.Consumers {
			for _, it := range acl.Effective(c.ACL, own, acl.ConsumerPrivs) {
				grantee := it.Grantee
				asOwner := grantee != "" && d.HasPrivsOf(grantee, own)
				if grantee == "" {
					grantee = "PUBLIC"
				}
				for _, p := range acl.Priv(it.Privs).Names() {
					grantable := "NO"
					if q, _ := acl.ParsePriv(p); asOwner || acl.Priv(it.GrantOptions)&q != 0 {
						grantable = "YES"
					}
					rows = append(rows, []any{cfg.Name, c.Name, grantee, it.Grantor, p, grantable})
				}
			}
		}
	}
	return rows
}
