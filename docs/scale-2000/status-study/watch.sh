#!/bin/bash
while true; do
until k=$(ls /tmp/mysql-operator-cluster-*/kubeconfig 2>/dev/null | head -1) && [ -n "$k" ]; do sleep 2; done
echo "kubeconfig $k" >&2
until /work/main/bin/kubectl --kubeconfig "$k" get crd mysqls.database.example.com >/dev/null 2>&1; do sleep 2; [ -e "$k" ] || break; done
while [ -e "$k" ]; do
  /work/main/bin/kubectl --kubeconfig "$k" get mysqls -A -w --output-watch-events -o json >> /tmp/watch.json 2>>/tmp/watch.err
  sleep 1
done
done
