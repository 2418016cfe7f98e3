CREATE TABLE `turns` (
	`task_id` text PRIMARY KEY NOT NULL,
	`instance_id` text NOT NULL,
	`params_json` text NOT NULL,
	`outcome_json` text,
	`attempts` integer DEFAULT 0 NOT NULL,
	`progress_at` integer NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`task_id`) REFERENCES `tasks`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `turns_by_progress` ON `turns` (`progress_at`);