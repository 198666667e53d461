import './style.css';
import { startApp } from './app';
import { createBackend } from './backend/create';

const root = document.getElementById('app');
if (root) startApp(root, createBackend(window));
