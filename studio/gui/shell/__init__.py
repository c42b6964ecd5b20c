"""The application: the main window, the welcome screen, template gallery, recent files and the
Keras file dialogs."""
