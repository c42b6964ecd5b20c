"""What a project trains the model to do, and everything that follows from it: labels, loss
and metrics, the output a model must end in, how an answer looks, how evaluation scores it and
how an export is checked. One module per task; ``registry`` lists them."""
