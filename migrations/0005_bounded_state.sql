CREATE TABLE `accepted_messages` (
	`message_id` text PRIMARY KEY NOT NULL,
	`task_id` text NOT NULL,
	`accepted_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `accepted_messages_by_time` ON `accepted_messages` (`accepted_at`);--> statement-breakpoint
CREATE TABLE `task_counts` (
	`context_id` text NOT NULL,
	`state` text NOT NULL,
	`n` integer NOT NULL,
	PRIMARY KEY(`context_id`, `state`)
);
--> statement-breakpoint
ALTER TABLE `turns` ADD `expected_by` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- Hand-written below this line (drizzle-kit has no triggers): the counts follow every insert, state change and delete of a task.
INSERT INTO `task_counts` (`context_id`, `state`, `n`) SELECT `context_id`, `state`, count(*) FROM `tasks` GROUP BY `context_id`, `state`;
--> statement-breakpoint
INSERT OR IGNORE INTO `accepted_messages` (`message_id`, `task_id`, `accepted_at`) SELECT `message_id`, `id`, `created_at` FROM `tasks`;
--> statement-breakpoint
CREATE TRIGGER `task_counts_insert` AFTER INSERT ON `tasks` BEGIN
	INSERT INTO `task_counts` (`context_id`, `state`, `n`) VALUES (NEW.`context_id`, NEW.`state`, 1)
	ON CONFLICT (`context_id`, `state`) DO UPDATE SET `n` = `n` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `task_counts_update` AFTER UPDATE OF `state`, `context_id` ON `tasks` WHEN OLD.`state` IS NOT NEW.`state` OR OLD.`context_id` IS NOT NEW.`context_id` BEGIN
	UPDATE `task_counts` SET `n` = `n` - 1 WHERE `context_id` = OLD.`context_id` AND `state` = OLD.`state`;
	INSERT INTO `task_counts` (`context_id`, `state`, `n`) VALUES (NEW.`context_id`, NEW.`state`, 1)
	ON CONFLICT (`context_id`, `state`) DO UPDATE SET `n` = `n` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `task_counts_delete` AFTER DELETE ON `tasks` BEGIN
	UPDATE `task_counts` SET `n` = `n` - 1 WHERE `context_id` = OLD.`context_id` AND `state` = OLD.`state`;
END;
