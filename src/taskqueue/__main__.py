from taskqueue.app import main

raise SystemExit(main())
