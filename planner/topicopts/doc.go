// Package topicopts owns the options of topics and consumers: it parses
// and validates the WITH (...) lists and actions of CREATE TOPIC and
// ALTER TOPIC (and the consumers they add or alter) into a
// topicstore.TopicConfig (NewTopic, Alter), and writes a configuration
// back as the CREATE TOPIC that recreates it (CreateTopicDDL, SHOW CREATE
// TOPIC) and as pg_class.reloptions (TopicReloptions, psql's \d+). The
// planner calls it for topic DDL and shares its error for an invalid
// option and its check of repeated options with the read options of a
// SELECT (BadOption, CheckDuplicates).
//
// Invariants: it is a leaf of the planner (it imports sql, values,
// pgerror and topicstore, never the planner, and never touches storage);
// every error it returns carries a SQLSTATE (22023 for a bad value or an
// unknown option, 42601 for a repeated one); CreateTopicDDL is the
// inverse of the parsers option by option, listing only the options that
// differ from their defaults, so what SHOW CREATE TOPIC prints creates
// the same configuration.
package topicopts
