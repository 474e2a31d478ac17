"""How jobs run: atomic output, the rule scripts' plumbing, the device, the code each rule depends on, the jobs' cost estimate, and the test-only fault hooks."""
