CREATE TABLE `push_configs` (
	`task_id` text NOT NULL,
	`id` text NOT NULL,
	`config_json` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`task_id`, `id`),
	FOREIGN KEY (`task_id`) REFERENCES `tasks`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `tasks` (
	`id` text PRIMARY KEY NOT NULL,
	`message_id` text NOT NULL,
	`context_id` text NOT NULL,
	`state` text NOT NULL,
	`status_at` integer NOT NULL,
	`created_at` integer NOT NULL,
	`task_json` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `tasks_message_id_unique` ON `tasks` (`message_id`);--> statement-breakpoint
CREATE INDEX `tasks_by_status_at` ON `tasks` (`status_at`,`id`);--> statement-breakpoint
CREATE INDEX `tasks_by_context` ON `tasks` (`context_id`,`status_at`,`id`);