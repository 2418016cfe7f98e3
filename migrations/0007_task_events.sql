CREATE TABLE `direct_replies` (
	`message_id` text PRIMARY KEY NOT NULL,
	`reply_json` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `direct_replies_by_time` ON `direct_replies` (`created_at`);--> statement-breakpoint
CREATE TABLE `task_events` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`task_id` text NOT NULL,
	`seq` integer NOT NULL,
	`kind` text NOT NULL,
	`event_json` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `task_events_by_seq` ON `task_events` (`task_id`,`seq`);