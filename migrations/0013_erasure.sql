CREATE TABLE `erased_messages` (
	`hash` text PRIMARY KEY NOT NULL,
	`accepted_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `erased_messages_by_time` ON `erased_messages` (`accepted_at`);--> statement-breakpoint
CREATE TABLE `erasure_key` (
	`id` integer PRIMARY KEY NOT NULL,
	`secret` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `erasures` (
	`id` integer PRIMARY KEY NOT NULL,
	`context_id` text,
	`state` text NOT NULL,
	`counts_json` text NOT NULL,
	`pending_json` text NOT NULL,
	`started_at` integer NOT NULL
);
--> statement-breakpoint
ALTER TABLE `accepted_messages` ADD `context_id` text;--> statement-breakpoint
ALTER TABLE `conversation_entries` ADD `context_id` text;--> statement-breakpoint
-- Hand-written below this line (drizzle-kit has no triggers). The rows written before this knew no context: their task's, while it is there.
UPDATE `accepted_messages` SET `context_id` = (SELECT `context_id` FROM `tasks` WHERE `tasks`.`id` = `accepted_messages`.`task_id`);
--> statement-breakpoint
UPDATE `conversation_entries` SET `context_id` = (SELECT `context_id` FROM `tasks` WHERE `tasks`.`id` = `conversation_entries`.`task_id`) WHERE `task_id` <> '';
--> statement-breakpoint
-- A turn's writes land only while its task exists (docs/retention.md "Erasure"): a step still running when its task was erased
-- writes nothing. The tables keyed by task without a foreign key skip such a row; those with one refuse it already.
CREATE TRIGGER `task_events_need_task` BEFORE INSERT ON `task_events` WHEN NOT EXISTS (SELECT 1 FROM `tasks` WHERE `id` = NEW.`task_id`) BEGIN
	SELECT RAISE(IGNORE);
END;
--> statement-breakpoint
CREATE TRIGGER `conversation_entries_need_task` BEFORE INSERT ON `conversation_entries` WHEN NEW.`task_id` <> '' AND NOT EXISTS (SELECT 1 FROM `tasks` WHERE `id` = NEW.`task_id`) BEGIN
	SELECT RAISE(IGNORE);
END;
--> statement-breakpoint
CREATE TRIGGER `tool_calls_need_task` BEFORE INSERT ON `tool_calls` WHEN NOT EXISTS (SELECT 1 FROM `tasks` WHERE `id` = NEW.`task_id`) BEGIN
	SELECT RAISE(IGNORE);
END;
--> statement-breakpoint
CREATE TRIGGER `hitl_requests_need_task` BEFORE INSERT ON `hitl_requests` WHEN NOT EXISTS (SELECT 1 FROM `tasks` WHERE `id` = NEW.`task_id`) BEGIN
	SELECT RAISE(IGNORE);
END;
