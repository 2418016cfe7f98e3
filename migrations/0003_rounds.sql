CREATE TABLE `rounds` (
	`task_id` text NOT NULL,
	`round` integer NOT NULL,
	`decision_json` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`task_id`, `round`),
	FOREIGN KEY (`task_id`) REFERENCES `tasks`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `subtasks` (
	`id` text PRIMARY KEY NOT NULL,
	`task_id` text NOT NULL,
	`round` integer NOT NULL,
	`type` text NOT NULL,
	`params_json` text NOT NULL,
	`fingerprint` text NOT NULL,
	`status` text NOT NULL,
	`result_json` text,
	`error` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`task_id`) REFERENCES `tasks`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `subtasks_by_task` ON `subtasks` (`task_id`,`round`);