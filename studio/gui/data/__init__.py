"""The Data tab: source, options, samples, health report and augmentation preview."""
