#!/bin/bash
elif [ 1 ]; then
  X=1
fi
