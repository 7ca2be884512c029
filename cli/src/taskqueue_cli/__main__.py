from taskqueue_cli.app import main

raise SystemExit(main())
