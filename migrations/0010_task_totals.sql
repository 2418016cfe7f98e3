CREATE TABLE `task_totals` (
	`state` text PRIMARY KEY NOT NULL,
	`n` integer NOT NULL
);
--> statement-breakpoint
-- Hand-written below this line (drizzle-kit has no triggers): the totals follow every insert, state change and delete of a task, as the per-context counts of 0005 do.
INSERT INTO `task_totals` (`state`, `n`) SELECT `state`, count(*) FROM `tasks` GROUP BY `state`;
--> statement-breakpoint
CREATE TRIGGER `task_totals_insert` AFTER INSERT ON `tasks` BEGIN
	INSERT INTO `task_totals` (`state`, `n`) VALUES (NEW.`state`, 1)
	ON CONFLICT (`state`) DO UPDATE SET `n` = `n` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `task_totals_update` AFTER UPDATE OF `state` ON `tasks` WHEN OLD.`state` IS NOT NEW.`state` BEGIN
	UPDATE `task_totals` SET `n` = `n` - 1 WHERE `state` = OLD.`state`;
	INSERT INTO `task_totals` (`state`, `n`) VALUES (NEW.`state`, 1)
	ON CONFLICT (`state`) DO UPDATE SET `n` = `n` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `task_totals_delete` AFTER DELETE ON `tasks` BEGIN
	UPDATE `task_totals` SET `n` = `n` - 1 WHERE `state` = OLD.`state`;
END;
--> statement-breakpoint
-- A context's rows at 0 (the states its tasks passed through) go when one of its tasks is deleted: a context whose tasks are all gone keeps no rows.
DROP TRIGGER `task_counts_delete`;
--> statement-breakpoint
CREATE TRIGGER `task_counts_delete` AFTER DELETE ON `tasks` BEGIN
	UPDATE `task_counts` SET `n` = `n` - 1 WHERE `context_id` = OLD.`context_id` AND `state` = OLD.`state`;
	DELETE FROM `task_counts` WHERE `context_id` = OLD.`context_id` AND `n` <= 0;
END;
--> statement-breakpoint
DELETE FROM `task_counts` WHERE `n` <= 0;
