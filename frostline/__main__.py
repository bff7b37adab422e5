from frostline.cli import main

main()
