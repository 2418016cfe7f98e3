CREATE TABLE `redeliveries` (
	`task_id` text NOT NULL,
	`config_id` text NOT NULL,
	`seqs_json` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`task_id`, `config_id`),
	FOREIGN KEY (`task_id`) REFERENCES `tasks`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
ALTER TABLE `accepted_messages` ADD `fingerprint` text;--> statement-breakpoint
ALTER TABLE `direct_replies` ADD `fingerprint` text;--> statement-breakpoint
ALTER TABLE `tasks` ADD `dead_letter_at` integer;