"""The Try and Evaluate tabs: answers to dropped samples with explanations, and scores on held-
out data."""
