"""How jobs run: atomic output, the rule scripts' plumbing, the device, the code each rule depends on, and the test-only fault hooks."""
