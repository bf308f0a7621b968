; The smallest valid program.
.isa "ember-v1"
  finish
